import { isMainThread } from 'node:worker_threads';
import type { Kysely } from 'kysely';
import { acceptWrite, receiptOf } from './accept-write.js';
import { checkWrite, type RuleEffects } from './append-rules.js';
import { type AcceptedWrite, insertEvents } from './insert-events.js';
import type { LeaseView } from './invocation-owner.js';
import { loadRuleState } from './load-rule-state.js';
import {
  type LogDialect,
  runAsync,
  runSync,
  type Statements,
  type SyncQueryRun,
  type Transact,
} from './log-dialect.js';
import type { LogDatabase } from './log-schema.js';
import { commitLoneInsert } from './lone-insert.js';
import type { RuleCache } from './rule-cache.js';
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
  /** Runs a transaction's statements on one connection of the store (PostgreSQL). */
  readonly transact?: Transact;
};

/** Where a batch stands while its statements run. */
export type BatchProgress = { outcomes: WriteOutcome[]; committing: boolean; heldAt?: number };

/**
 * Commits a batch of writes in one transaction (and, with `synchronous=FULL`, one
 * fsync). Each write is checked against the rules in order, seeing the writes before
 * it; a refused write is refused alone and the rest go on. If the transaction fails,
 * the whole batch fails — `committing` when `COMMIT` itself failed, since the store may
 * have kept it — except the writes a rule had already refused. Never throws. On a
 * SQLite handle (`direct`) it commits before it returns.
 */
export function commitBatch(
  db: Kysely<LogDatabase>,
  context: BatchContext,
  batch: readonly StagedWrite[],
): BatchResult | Promise<BatchResult> {
  // Said by the thread that runs the transaction, not by whoever chose it.
  const committer: Committer = isMainThread ? 'event_loop' : 'writer_thread';
  const started = performance.now();
  const progress: BatchProgress = { outcomes: [], committing: false };
  const { direct } = context;
  if (direct === undefined) return commitAsync(db, context, batch, { started, progress, committer });
  try {
    // A hook that stops the commit before `COMMIT` needs a transaction to stop in.
    const lone = batch.length === 1 && context.beforeCommit === undefined;
    if (!(lone && commitLoneInsert(db, context.cache, direct, batch[0]!, progress))) {
      runSync(batchSteps(db, context, batch, progress, committer), direct);
    }
  } catch (cause) {
    return failed(context, progress, cause);
  }
  return committed(context, { started, progress, committer });
}

type Run = { readonly started: number; readonly progress: BatchProgress; readonly committer: Committer };

async function commitAsync(
  db: Kysely<LogDatabase>,
  context: BatchContext,
  batch: readonly StagedWrite[],
  run: Run,
): Promise<BatchResult> {
  const { progress, committer } = run;
  try {
    if (context.transact !== undefined) {
      await context.transact(batchSteps(db, context, batch, progress, committer));
    } else {
      // Holding one connection keeps the batch's statements in one transaction.
      await db.connection().execute((connection) =>
        runAsync(batchSteps(connection, context, batch, progress, committer), async (query) => {
          return (await connection.executeQuery(query)).rows;
        }),
      );
    }
  } catch (cause) {
    return failed(context, progress, cause);
  }
  return committed(context, run);
}

function failed(context: BatchContext, progress: BatchProgress, cause: unknown): BatchResult {
  context.cache.reset();
  return { kind: 'failed', committing: progress.committing, cause, outcomes: progress.outcomes };
}

function committed(context: BatchContext, { started, progress, committer }: Run): BatchResult {
  context.cache.trim();
  return {
    kind: 'committed',
    outcomes: progress.outcomes,
    committer,
    elapsedMs: performance.now() - started,
    waitedMs: (progress.heldAt ?? started) - started,
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
    yield* dialect.refresh(cache);
    progress.heldAt = performance.now();
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
    if (progress.committing && dialect.refusedAtCommit(error)) progress.committing = false;
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
    const entry = acceptWrite(cache, staged, effects);
    outcomes.push({ stored: receiptOf(entry) });
    accepted.push(entry);
  }
  return accepted;
}
