import type { Invocation } from '@factum/agent-facts';
import type { Kysely } from 'kysely';
import type { RuleEffects } from './append-rules.js';
import type { AcceptedWrite } from './insert-events.js';
import { run, type Statements } from './log-dialect.js';
import type { LogDatabase } from './log-schema.js';
import { RuleCache } from './rule-cache.js';

/** What an accepted approval write changes in the rules' cache. */
export function applyApprovalEffects(cache: RuleCache, invocation: Invocation, effects: RuleEffects): void {
  const { sessionId, invocationId } = invocation;
  if (effects.request) {
    cache.operations.set(RuleCache.key(sessionId, effects.request.operationId), {
      invocationId,
      parentOperationId: null,
      state: 'requested',
      approval: { ...effects.request.approval },
    });
  }
  if (effects.decide) {
    const known = cache.operation(sessionId, effects.decide.operationId);
    if (known?.approval) known.approval.decision = effects.decide.decision;
  }
  if (effects.resume) {
    const key = RuleCache.key(sessionId, effects.resume.operationId);
    const known = cache.operations.get(key);
    if (known) {
      cache.operations.set(key, {
        ...known,
        invocationId,
        parentOperationId: effects.resume.parentOperationId,
        state: effects.resume.state,
      });
    }
  }
}

/**
 * Writes the approval columns of `operations`. Each update names the state it expects
 * and returns the row it changed: one that changes nothing means a rule was skipped,
 * and the batch fails rather than record a second decision or a second run.
 */
export function* writeApprovalEffects(
  builder: Kysely<LogDatabase>,
  accepted: readonly AcceptedWrite[],
): Statements<void> {
  const requested = accepted.filter((entry) => entry.effects.request);
  if (requested.length > 0) {
    yield* run(
      builder
        .insertInto('operations')
        .values(
          requested.map(({ row, effects }) => {
            const { operationId, approval } = effects.request!;
            return {
              session_id: row.session_id,
              operation_id: operationId,
              invocation_id: row.invocation_id,
              parent_operation_id: null,
              state: 'requested' as const,
              sequence: row.sequence,
              approval_invocation_id: row.invocation_id,
              tool_name: approval.toolName,
              input_digest: approval.inputDigest,
              expires_at: approval.expiresAt,
              decision: null,
              requested_sequence: row.sequence,
              decided_sequence: null,
            };
          }),
        )
        .compile(),
    );
  }
  for (const { row, effects } of accepted) {
    if (effects.decide) {
      const changed = yield* run(
        builder
          .updateTable('operations')
          .set({ decision: effects.decide.decision, decided_sequence: row.sequence })
          .where('session_id', '=', row.session_id)
          .where('operation_id', '=', effects.decide.operationId)
          .where('state', '=', 'requested')
          .where('decision', 'is', null)
          .returning('operation_id')
          .compile(),
      );
      expectOne(changed, `decision of operation ${effects.decide.operationId}`);
    }
    if (effects.resume) {
      const changed = yield* run(
        builder
          .updateTable('operations')
          .set({
            state: effects.resume.state,
            invocation_id: row.invocation_id,
            parent_operation_id: effects.resume.parentOperationId,
            sequence: row.sequence,
          })
          .where('session_id', '=', row.session_id)
          .where('operation_id', '=', effects.resume.operationId)
          .where('state', '=', 'requested')
          .returning('operation_id')
          .compile(),
      );
      expectOne(
        changed,
        `${effects.resume.state === 'dispatched' ? 'dispatch' : 'rejection'} of operation ${effects.resume.operationId}`,
      );
    }
  }
}

function expectOne(rows: readonly unknown[], what: string): void {
  if (rows.length !== 1) {
    throw new Error(
      `the ${what} changed ${rows.length} rows instead of one: the log's state moved under its rules`,
    );
  }
}
