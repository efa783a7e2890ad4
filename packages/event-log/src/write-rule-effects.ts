import type { Kysely } from 'kysely';
import { changesNothing } from './append-rules.js';
import { writeApprovalEffects } from './approval-effects.js';
import type { AcceptedWrite } from './insert-events.js';
import { run, type Statements } from './log-dialect.js';
import type { LogDatabase } from './log-schema.js';

/**
 * Writes what the accepted events change beside the events table: invocation rows,
 * operation rows and who may open a session next. The tables' keys back the rules up: a second
 * dispatch or a second live invocation in a session fails here even if a rule was
 * skipped.
 */
export function* writeRuleEffects(
  builder: Kysely<LogDatabase>,
  accepted: readonly AcceptedWrite[],
): Statements<void> {
  // Most batches are model facts: nothing to look through.
  if (accepted.every((entry) => changesNothing(entry.effects))) return;
  const opened = accepted.filter((entry) => entry.effects.openInvocation);
  if (opened.length > 0) {
    yield* run(
      builder
        .insertInto('invocations')
        .values(
          opened.map(({ row, staged, effects }) => ({
            session_id: row.session_id,
            invocation_id: row.invocation_id,
            turn_id: staged.event.invocation.turnId,
            run_id: row.run_id,
            opened_sequence: row.sequence,
            ended_sequence: null,
            terminal: null,
            live: 1,
            owner_host_id: effects.owner?.hostId ?? null,
            owner_epoch: effects.owner?.epoch ?? null,
            fence: 0,
            idempotency_key: effects.submission ?? null,
          })),
        )
        .compile(),
    );
  }
  for (const { row, effects } of accepted) {
    if (!effects.takeOver || !effects.owner) continue;
    // The fence moves in the transaction that records the takeover's first fact.
    yield* run(
      builder
        .updateTable('invocations')
        .set((eb) => ({
          owner_host_id: effects.owner!.hostId,
          owner_epoch: effects.owner!.epoch,
          fence: eb('fence', '+', 1),
        }))
        .where('session_id', '=', row.session_id)
        .where('invocation_id', '=', row.invocation_id)
        .compile(),
    );
  }
  for (const { row, effects } of accepted) {
    if (!effects.endInvocation) continue;
    yield* run(
      builder
        .updateTable('invocations')
        .set({ ended_sequence: row.sequence, terminal: effects.endInvocation.terminal, live: null })
        .where('session_id', '=', row.session_id)
        .where('invocation_id', '=', row.invocation_id)
        .compile(),
    );
  }
  // Before the other operation rows: a settlement in the same batch closes a resumed row.
  yield* writeApprovalEffects(builder, accepted);
  const operations = accepted.filter((entry) => entry.effects.dispatch || entry.effects.reject);
  if (operations.length > 0) {
    yield* run(
      builder
        .insertInto('operations')
        .values(
          operations.map(({ row, effects }) => ({
            session_id: row.session_id,
            operation_id: (effects.dispatch ?? effects.reject)!.operationId,
            invocation_id: row.invocation_id,
            parent_operation_id: effects.dispatch?.parentOperationId ?? null,
            state: effects.dispatch ? ('dispatched' as const) : ('rejected' as const),
            sequence: row.sequence,
          })),
        )
        .compile(),
    );
  }
  for (const { row, effects } of accepted) {
    if (!effects.close) continue;
    yield* run(
      builder
        .updateTable('operations')
        .set({ state: 'closed' })
        .where('session_id', '=', row.session_id)
        .where('operation_id', '=', effects.close.operationId)
        .compile(),
    );
  }
  yield* writeSessionAdmission(builder, accepted);
}

function* writeSessionAdmission(
  builder: Kysely<LogDatabase>,
  accepted: readonly AcceptedWrite[],
): Statements<void> {
  const admission = new Map<string, { live: string | null; held: string | null }>();
  for (const { row, effects } of accepted) {
    if (effects.openInvocation) admission.set(row.session_id, { live: row.invocation_id, held: null });
    if (effects.endInvocation)
      admission.set(row.session_id, { live: null, held: effects.endInvocation.heldFor });
  }
  if (admission.size === 0) return;
  yield* run(
    builder
      .insertInto('sessions')
      .values(
        [...admission].map(([sessionId, state]) => ({
          session_id: sessionId,
          live_invocation_id: state.live,
          held_for_invocation_id: state.held,
        })),
      )
      .onConflict((conflict) =>
        conflict.column('session_id').doUpdateSet((eb) => ({
          live_invocation_id: eb.ref('excluded.live_invocation_id'),
          held_for_invocation_id: eb.ref('excluded.held_for_invocation_id'),
        })),
      )
      .compile(),
  );
}
