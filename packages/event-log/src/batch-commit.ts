import { isMainThread } from 'node:worker_threads';
import type { Kysely } from 'kysely';
import { acceptWrite, receiptOf } from './accept-write.js';
import { checkWrite, type RuleEffects } from './append-rules.js';
import { type AcceptedWrite, insertEvents } from './insert-events.js';
import type { LeaseView } from './invocation-owner.js';
import { loadRuleState } from './load-rule-state.js';
import {
  type LogDialect,
  run,
  runAsync,
  runSync,
  type Statements,
  type SyncQueryRun,
  type Transact,
} from './log-dialect.js';
import type { LogDatabase } from './log-schema.js';
import { commitLoneInsert } from './lone-insert.js';
import { checkOnHead } from './on-head-rule.js';
import { oneTripFits, refuseLeasedWork, storeChecksLease } from './one-trip-batch.js';
import type { ChainHead, RuleCache } from './rule-cache.js';
import { RuleRefusal } from './rule-refusal.js';
import type { BatchInfo, BatchResult, Committer, StagedWrite, WriteOutcome } from './staged-write.js';
import { writeRuleEffects } from './write-rule-effects.js';
import { startsLeasedWork } from './writer-lease-rule.js';

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
export type BatchProgress = {
  outcomes: WriteOutcome[];
  committing: boolean;
  heldAt?: number;
  /** The head a one-message transaction assumed (see `LogDialect.oneTrip`). */
  guessed?: ChainHead;
};

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
  return commitTried(db, context, batch, { stale: false, checkIds: false, lease: false, assumed: false });
}

function commitTried(
  db: Kysely<LogDatabase>,
  context: BatchContext,
  batch: readonly StagedWrite[],
  first: Tried,
): BatchResult | Promise<BatchResult> {
  // A write whose event id the log already holds (or that repeats one of its batch)
  // fails the unique index, and with it the batch: the batch runs once more, the ids
  // looked up first, so that only such writes are refused (`duplicate_event`) and the
  // others' go on. The lookup costs a statement, so only a batch that needs it pays.
  // A one-trip batch whose guessed head was stale (another writer committed) wrote
  // nothing: it runs once more, reading the head first.
  const next = (result: BatchResult, tried: Tried): BatchResult | Promise<BatchResult> => {
    if (result.kind !== 'failed' || result.committing) {
      return tried.stale && result.kind === 'committed' ? { ...result, staleHead: true } : result;
    }
    if (!tried.stale && context.dialect.headMoved?.(result.cause)) {
      const { cache } = context;
      cache.quietRefreshes = 0;
      cache.quietNeeded = Math.min(cache.quietNeeded * 2, 64);
      return settled(attempt(db, context, batch, tried.checkIds), { ...tried, stale: true });
    }
    // A one-message batch's writer's lease refused by the store: nothing was written.
    // Its writes that start leased work are refused by the rule, judged on the lease the
    // store saw, with the two-trip path's reasons; the others run once more without them.
    const lease = tried.lease ? undefined : context.dialect.leaseRefusal?.(result.cause);
    if (lease !== undefined) {
      const { refused, rest } = refuseLeasedWork(batch, lease);
      if (rest.length === 0) return { ...result, outcomes: refused };
      const merge = (again: BatchResult): BatchResult => {
        const outcomes = [...refused];
        rest.forEach((index, at) => {
          const outcome = again.outcomes[at];
          if (outcome !== undefined) outcomes[index] = outcome;
        });
        return { ...again, outcomes };
      };
      const again = commitTried(
        db,
        context,
        rest.map((index) => batch[index]!),
        { ...tried, lease: true },
      );
      return again instanceof Promise ? again.then(merge) : merge(again);
    }
    // An opening or a dispatch taken for new in one message was not: nothing was
    // written, the cache was dropped, and the batch runs again reading what it names.
    if (!tried.assumed && context.dialect.assumedNew?.(result.cause)) {
      return settled(attempt(db, context, batch, tried.checkIds), { ...tried, assumed: true });
    }
    if (!tried.checkIds && context.dialect.repeatsEventId(result.cause)) {
      return settled(attempt(db, context, batch, true), { ...tried, checkIds: true });
    }
    return result;
  };
  const settled = (result: BatchResult | Promise<BatchResult>, tried: Tried) =>
    result instanceof Promise ? result.then((value) => next(value, tried)) : next(result, tried);
  return settled(attempt(db, context, batch, first.checkIds), first);
}

/** What `commitBatch` has tried again already. */
type Tried = {
  readonly stale: boolean;
  readonly checkIds: boolean;
  readonly lease: boolean;
  readonly assumed: boolean;
};

function attempt(
  db: Kysely<LogDatabase>,
  context: BatchContext,
  batch: readonly StagedWrite[],
  checkIds: boolean,
): BatchResult | Promise<BatchResult> {
  // Said by the thread that runs the transaction, not by whoever chose it.
  const committer: Committer = isMainThread ? 'event_loop' : 'writer_thread';
  const started = performance.now();
  const progress: BatchProgress = { outcomes: [], committing: false };
  const how: Run = { started, progress, committer, checkIds };
  const { direct } = context;
  if (direct === undefined) return commitAsync(db, context, batch, how);
  try {
    // A hook that stops the commit before `COMMIT` needs a transaction to stop in.
    const lone =
      batch.length === 1 && batch[0]!.onHead === undefined && context.beforeCommit === undefined && !checkIds;
    if (!(lone && commitLoneInsert(db, context.cache, direct, batch[0]!, progress))) {
      runSync(batchSteps(db, context, batch, how), direct);
    }
  } catch (cause) {
    return failed(context, progress, cause);
  }
  return committed(context, how);
}

type Run = {
  readonly started: number;
  readonly progress: BatchProgress;
  readonly committer: Committer;
  /** Look the batch's event ids up before the rules (see `commitBatch`). */
  readonly checkIds: boolean;
};

async function commitAsync(
  db: Kysely<LogDatabase>,
  context: BatchContext,
  batch: readonly StagedWrite[],
  run: Run,
): Promise<BatchResult> {
  const { progress } = run;
  try {
    if (context.transact !== undefined) {
      await context.transact(batchSteps(db, context, batch, run));
    } else {
      // Holding one connection keeps the batch's statements in one transaction.
      await db.connection().execute((connection) =>
        runAsync(batchSteps(connection, context, batch, run), async (query) => {
          return (await connection.executeQuery(query)).rows;
        }),
      );
    }
  } catch (cause) {
    return failed(context, progress, cause, batch);
  }
  return committed(context, run);
}

function failed(
  context: BatchContext,
  progress: BatchProgress,
  cause: unknown,
  batch?: readonly StagedWrite[],
): BatchResult {
  const guessed = progress.guessed;
  const { dialect } = context;
  const lapsed = (error: unknown) =>
    dialect.lapsedAtCommit?.(error) === true || dialect.leaseRefusal?.(error) !== undefined;
  if (
    guessed !== undefined &&
    batch !== undefined &&
    (dialect.headMoved?.(cause) || dialect.leaseRefusal?.(cause) !== undefined)
  ) {
    // Nothing was written, and the rules changed only what the cache holds of the
    // batch's own sessions: without them, the cache is as it was at the guessed head,
    // and the next refresh drops what other writers changed since.
    context.cache.forgetSessions(batch.map((staged) => staged.event.invocation.sessionId));
    context.cache.head = guessed;
  } else {
    context.cache.reset();
  }
  if (batch !== undefined && !progress.committing && lapsed(cause)) {
    // The lease guard (or, a second time, the one-message lease check) failed the transaction: nothing of it was kept, and every write of
    // the batch — all this log's, under the one lease — is refused as such.
    const refused = {
      code: 'lease_expired' as const,
      message: `the writer's lease expired before the batch reached COMMIT by the database's clock: nothing of it was written`,
    };
    const outcomes = batch.map((_, index) => {
      const outcome = progress.outcomes[index];
      return outcome !== undefined && 'refused' in outcome ? outcome : { refused };
    });
    return { kind: 'failed', committing: false, cause, outcomes };
  }
  return { kind: 'failed', committing: progress.committing, cause, outcomes: progress.outcomes };
}

function committed(context: BatchContext, { started, progress, committer }: Run): BatchResult {
  const { cache } = context;
  if (progress.guessed) cache.quietNeeded = Math.max(1, cache.quietNeeded - 1);
  cache.trim();
  return {
    kind: 'committed',
    outcomes: progress.outcomes,
    committer,
    ...(progress.guessed ? { oneTrip: true } : {}),
    elapsedMs: performance.now() - started,
    waitedMs: (progress.heldAt ?? started) - started,
  };
}

/** The batch's transaction, statement by statement (see `Statements`). */
function* batchSteps(
  builder: Kysely<LogDatabase>,
  context: BatchContext,
  batch: readonly StagedWrite[],
  { progress, committer, checkIds }: Run,
): Statements<void> {
  const { dialect, cache, beforeCommit } = context;
  // The head and the rules' state all cached: the transaction goes as one message,
  // its head checked by the store, and a stale guess writes nothing (see `commitBatch`).
  // The writer's own lease, never cached, is then checked by the store too.
  const inMessage = dialect.leaseCheck !== undefined && dialect.assumedNew !== undefined;
  const fresh = inMessage && dialect.freshSessions !== undefined ? new Set<string>() : undefined;
  const oneTrip =
    dialect.oneTrip && !checkIds && oneTripFits(cache, batch, { inMessage, fresh })
      ? dialect.oneTrip
      : undefined;
  for (const statement of dialect.begin) yield statement;
  try {
    if (oneTrip) {
      progress.guessed = cache.head!;
      yield oneTrip(progress.guessed);
      // Sessions taken for new: empty in the cache, checked by the store.
      if (fresh !== undefined && fresh.size > 0) {
        for (const sessionId of fresh) cache.session(sessionId);
        yield dialect.freshSessions!([...fresh]);
      }
    } else {
      yield* dialect.refresh(cache);
    }
    progress.heldAt = performance.now();
    // One message: everything the rules read is cached, but the writer's lease.
    const leases = oneTrip
      ? batch.some(startsLeasedWork)
        ? storeChecksLease
        : undefined
      : yield* loadRuleState(builder, { cache, clock: dialect.clock }, batch);
    const stored = checkIds ? yield* storedEventIds(builder, batch) : undefined;
    const accepted = applyRules(cache, batch, progress.outcomes, leases, stored);
    yield* insertEvents(builder, accepted, dialect.rowsPerInsert);
    yield* writeRuleEffects(builder, accepted);
    // Optional call: without the hook, no id list is built.
    beforeCommit?.({
      size: accepted.length,
      eventIds: accepted.map((entry) => entry.row.event_id),
      committer,
    });
    const guarded =
      dialect.leaseGuard &&
      batch.find((staged, index) => startsLeasedWork(staged) && 'stored' in (progress.outcomes[index] ?? {}))
        ?.writer;
    if (guarded) {
      yield oneTrip && dialect.leaseCheck ? dialect.leaseCheck(guarded) : dialect.leaseGuard!(guarded);
    }
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
  stored: Set<string> | undefined,
): AcceptedWrite[] {
  const accepted: AcceptedWrite[] = [];
  const verdicts = new Map<object, boolean>();
  for (const staged of batch) {
    let effects: RuleEffects;
    try {
      checkOnHead(staged, cache, verdicts);
      if (stored?.has(staged.event.id)) {
        throw new RuleRefusal('duplicate_event', `an event with id ${staged.event.id} is already in the log`);
      }
      effects = checkWrite(staged, cache, leases);
    } catch (error) {
      if (!(error instanceof RuleRefusal)) throw error;
      outcomes.push({ refused: { code: error.code, message: error.message } });
      continue;
    }
    const entry = acceptWrite(cache, staged, effects);
    // A later write of the batch with the same id is a repeat too.
    stored?.add(staged.event.id);
    outcomes.push({ stored: receiptOf(entry) });
    accepted.push(entry);
  }
  return accepted;
}

/** Which of the batch's event ids the log already holds. */
function* storedEventIds(
  builder: Kysely<LogDatabase>,
  batch: readonly StagedWrite[],
): Statements<Set<string>> {
  const ids = [...new Set(batch.map((staged) => staged.event.id))];
  const stored = new Set<string>();
  // In slices, under every store's limit on a statement's parameters.
  for (let start = 0; start < ids.length; start += 1000) {
    const slice = ids.slice(start, start + 1000);
    const query = builder.selectFrom('events').select('event_id').where('event_id', 'in', slice);
    for (const row of yield* run(query.compile())) stored.add(row.event_id);
  }
  return stored;
}
