import { isMainThread } from 'node:worker_threads';
import { chainLink, contentDigest } from '@factum/agent-facts/digest';
import type { Kysely } from 'kysely';
import { checkWrite, type RuleEffects } from './append-rules.js';
import { applyApprovalEffects } from './approval-effects.js';
import { type AcceptedWrite, insertEvents } from './insert-events.js';
import type { LeaseView } from './invocation-owner.js';
import { loadRuleState } from './load-rule-state.js';
import { type LogDialect, runAsync, runSync, type Statements, type SyncQueryRun } from './log-dialect.js';
import type { LogDatabase } from './log-schema.js';
import { RuleCache } from './rule-cache.js';
import { RuleRefusal } from './rule-refusal.js';
import type { BatchInfo, BatchResult, Committer, StagedWrite, WriteOutcome } from './staged-write.js';
import { writeRuleEffects } from './write-rule-effects.js';

/** What a batch commit needs beside the connection. */
export type BatchContext = {
  readonly dialect: LogDialect;
  readonly cache: RuleCache;
  /** Runs once every row is written, before `COMMIT`; a throw rolls the batch back. */
  readonly beforeCommit?: (batch: BatchInfo) => void;
  /**
   * Runs statements synchronously on the store's handle (SQLite): the whole transaction
   * then runs without yielding, so nothing else in the thread can run inside it.
   */
  readonly direct?: SyncQueryRun;
};

/** Where a batch stands while its statements run. */
type BatchProgress = { outcomes: WriteOutcome[]; committing: boolean };

/**
 * Commits a batch of writes in one transaction (and, with `synchronous=FULL`, one
 * fsync). Each write is checked against the rules in order, seeing the writes before
 * it; a refused write is refused alone and the rest go on. If the transaction fails,
 * the whole batch fails — `committing` when `COMMIT` itself failed, since the store may
 * have kept it — except the writes a rule had already refused. Never throws.
 */
export async function commitBatch(
  db: Kysely<LogDatabase>,
  context: BatchContext,
  batch: readonly StagedWrite[],
): Promise<BatchResult> {
  // Said by the thread that runs the transaction, not by whoever chose it.
  const committer: Committer = isMainThread ? 'event_loop' : 'writer_thread';
  const started = performance.now();
  const progress: BatchProgress = { outcomes: [], committing: false };
  try {
    if (context.direct !== undefined) {
      runSync(batchSteps(db, context, batch, progress, committer), context.direct);
    } else {
      // Holding one connection keeps the batch's statements in one transaction.
      await db.connection().execute((connection) =>
        runAsync(batchSteps(connection, context, batch, progress, committer), async (query) => {
          return (await connection.executeQuery(query)).rows;
        }),
      );
    }
  } catch (cause) {
    context.cache.reset();
    return { kind: 'failed', committing: progress.committing, cause, outcomes: progress.outcomes };
  }
  context.cache.trim();
  return {
    kind: 'committed',
    outcomes: progress.outcomes,
    committer,
    elapsedMs: performance.now() - started,
  };
}

/** The batch's transaction, statement by statement (see `Statements`). */
function* batchSteps(
  builder: Kysely<LogDatabase>,
  context: BatchContext,
  batch: readonly StagedWrite[],
  progress: BatchProgress,
  committer: Committer,
): Statements<void> {
  const { dialect, cache, beforeCommit } = context;
  for (const statement of dialect.begin) yield statement;
  try {
    const token = yield* dialect.changeToken();
    if (token === undefined || token !== cache.token) cache.reset();
    cache.token = token;
    const leases = yield* loadRuleState(builder, { cache, clock: dialect.clock }, batch);
    const accepted = applyRules(cache, batch, progress.outcomes, leases);
    yield* insertEvents(builder, accepted, dialect.rowsPerInsert);
    yield* writeRuleEffects(builder, accepted);
    // Optional call: without the hook, no id list is built.
    beforeCommit?.({
      size: accepted.length,
      eventIds: accepted.map((entry) => entry.row.event_id),
      committer,
    });
    progress.committing = true;
    yield dialect.commit;
  } catch (error) {
    if (!progress.committing) {
      try {
        yield dialect.rollback;
      } catch {
        // The transaction is gone either way; the first error is the one to report.
      }
    }
    throw error;
  }
}

/**
 * Checks each write in order and chains the accepted ones; `outcomes` gets one entry
 * per write of the batch, in its order.
 */
function applyRules(
  cache: RuleCache,
  batch: readonly StagedWrite[],
  outcomes: WriteOutcome[],
  leases: LeaseView | undefined,
): AcceptedWrite[] {
  const accepted: AcceptedWrite[] = [];
  for (const staged of batch) {
    let effects: RuleEffects;
    try {
      effects = checkWrite(staged, cache, leases);
    } catch (error) {
      if (!(error instanceof RuleRefusal)) throw error;
      outcomes.push({ refused: { code: error.code, message: error.message } });
      continue;
    }
    const { event } = staged;
    const session = cache.session(event.invocation.sessionId);
    const sequence = (cache.head?.sequence ?? 0) + 1;
    const bodyDigest = contentDigest(staged.body);
    const digest = chainLink(cache.head?.digest, bodyDigest);
    const sessionDigest = chainLink(session.head?.digest, bodyDigest);
    cache.head = { sequence, digest };
    session.head = { sequence, digest: sessionDigest };
    applyEffects(cache, staged, effects);
    outcomes.push({ stored: { sequence, eventId: event.id, digest } });
    accepted.push({
      staged,
      effects,
      row: {
        sequence,
        event_id: event.id,
        session_id: event.invocation.sessionId,
        invocation_id: event.invocation.invocationId,
        run_id: event.invocation.runId,
        kind: event.fact.kind,
        operation_id: 'operationId' in event.fact ? event.fact.operationId : null,
        body: staged.body,
        bytes: staged.bytes,
        digest,
        session_digest: sessionDigest,
      },
    });
  }
  return accepted;
}

function applyEffects(cache: RuleCache, staged: StagedWrite, effects: RuleEffects): void {
  const { invocation } = staged.event;
  const session = cache.session(invocation.sessionId);
  if (effects.openInvocation) {
    cache.invocations.set(RuleCache.key(invocation.sessionId, invocation.invocationId), {
      turnId: invocation.turnId,
      runId: invocation.runId,
      ended: false,
      terminal: null,
      owner: effects.owner ?? null,
    });
    session.liveInvocationId = invocation.invocationId;
    session.heldForInvocationId = null;
  }
  if (effects.takeOver && effects.owner) {
    const known = cache.invocation(invocation.sessionId, invocation.invocationId);
    if (known) known.owner = effects.owner;
  }
  if (effects.endInvocation) {
    const known = cache.invocation(invocation.sessionId, invocation.invocationId);
    if (known) {
      known.ended = true;
      known.terminal = effects.endInvocation.terminal;
    }
    session.liveInvocationId = null;
    session.heldForInvocationId = effects.endInvocation.heldFor;
  }
  const operation = effects.dispatch ?? effects.reject;
  if (operation) {
    cache.operations.set(RuleCache.key(invocation.sessionId, operation.operationId), {
      invocationId: invocation.invocationId,
      parentOperationId: effects.dispatch?.parentOperationId ?? null,
      state: effects.dispatch ? 'dispatched' : 'rejected',
    });
  }
  if (effects.close) {
    const known = cache.operation(invocation.sessionId, effects.close.operationId);
    if (known) known.state = 'closed';
  }
  if (effects.redispatch) {
    const known = cache.operation(invocation.sessionId, effects.redispatch.operationId);
    if (known) known.attempt = effects.redispatch.attempt;
  }
  applyApprovalEffects(cache, invocation, effects);
}
