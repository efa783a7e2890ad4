import { existsSync } from 'node:fs';
import type {
  CommitReceipt,
  EventSink,
  EventWrite,
  Invocation,
  LogScope,
  RunBoundary,
  RuntimeEvent,
  ToolResult,
} from '@factum/agent-facts';
import type { Kysely } from 'kysely';
import { AppendRefusedError } from './append-refused-error.js';
import {
  type InvocationApproval,
  invocationApprovals,
  type PendingApproval,
  pendingApprovals,
} from './approval-queries.js';
import { BatchRouter } from './batch-router.js';
import { type CopyOptions, type CopyReport, copyRows } from './copy-log.js';
import { EventLogError } from './event-log-error.js';
import { type ForkPoint, resolveForkPoint } from './fork-boundary.js';
import { prefixOf } from './fork-prefix.js';
import { GroupCommit } from './group-commit.js';
import { HostLease, type LeaseOptions } from './host-lease.js';
import { sameOwner, type WriterStamp } from './invocation-owner.js';
import {
  type InvocationOwnership,
  ownershipOf,
  type UnfinishedInvocation,
  unfinishedWithOwners,
} from './invocation-ownership.js';
import { type InvocationRecovery, recoveryOf } from './invocation-recovery.js';
import { databaseNow } from './lease-queries.js';
import type { SyncQueryRun } from './log-dialect.js';
import type { LogPrefix } from './log-prefix.js';
import {
  operationSessions,
  type ReadBounds,
  readBounded,
  readPage,
  runEnd,
  unfinished,
} from './log-queries.js';
import type { LogDatabase } from './log-schema.js';
import type { LogStats } from './log-stats.js';
import { migrateToLatest } from './migrations.js';
import { type OpenDatabase, openSqlite } from './open-database.js';
import { packedMap } from './packed-map.js';
import { type SessionHead, sessionHead } from './session-head.js';
import { SessionReads } from './session-reads.js';
import type { PendingWrite } from './settle-batch.js';
import { stageWrite, type WriteLimits } from './stage-write.js';
import type { CommitHooks, StagedWrite } from './staged-write.js';
import type { StoredEvent } from './stored-event.js';
import { readSubmission, type Submission } from './submission-query.js';
import { readToolResult, readToolResults } from './tool-result-queries.js';
import { type ChainReport, type VerifyOptions, verifyChain } from './verify-chain.js';

/**
 * Where a log lives: a SQLite file path, or a PostgreSQL connection string with the
 * size of the log's connection pool (`pool`, an integer from 1 to 100, default 4).
 */
export type LogTarget = string | { readonly postgres: string; readonly pool?: number };

/** Options of `EventLog.open`. */
export type EventLogOptions = {
  /**
   * PostgreSQL: how long a connection of the log may sit idle inside a transaction
   * before the server ends it (default 6000 ms: above the default code cell deadline of 5 s, under the default lease TTL of 10 s), freeing the chain's lock a stalled host
   * held. Keep it well under the lease's time-to-live, and above the longest the event
   * loop is ever blocked (a code cell's deadline).
   */
  readonly transactionBoundMs?: number;
  /** Writes per group commit at most (default 256). */
  readonly maxBatch?: number;
  /** Canonical size of one event at most (default 1 MiB). */
  readonly maxEventBytes?: number;
  /** Size of one stored tool result at most (default 32 MiB). */
  readonly maxResultBytes?: number;
  /**
   * Commit a SQLite file's batches in the process's writer thread (default true), so
   * that no statement or fsync blocks the event loop. `false` commits on the event loop.
   */
  readonly writerThread?: boolean;
  /**
   * How long a lone write may block the event loop on average, its transaction and
   * fsync included (default 4 ms, under the 5 ms of event-loop lateness the log allows
   * itself). Past it, lone writes commit in the writer thread too, until the average
   * falls under half of it. Lone writes also go to the thread for the next eight
   * batches after one of several callers' writes, so that a commit on the loop does not
   * hold up the other writers. `0` sends every write to the thread; `Infinity` keeps
   * lone writes on the loop in both cases.
   */
  readonly loneCommitBudgetMs?: number;
  /** Points inside a commit where crash tests stop the process. */
  readonly hooks?: CommitHooks;
};

/** Where a run stands: its last event and the invocations it holds. */
export type RunSource = { readonly boundary: RunBoundary };

/**
 * The append-only log of agent facts: the only authority of a run. Every write is
 * parsed and checked against the log's rules, committed with others in one
 * transaction, and chained into a SHA-256 digest; reads are bounded and fail rather
 * than cut history.
 *
 * @example
 * await using log = await EventLog.open('.factum/events.sqlite');
 * await log.append(EventWrite.plain(RuntimeEvent.create(invocation, fact)));
 * const prefix = await log.scopedPrefix({ session: invocation.sessionId }, { maxEvents: 1000, maxBytes: 1 << 20 });
 */
export class EventLog implements EventSink, AsyncDisposable {
  readonly #db: Kysely<LogDatabase>;
  readonly #dialect: 'sqlite' | 'postgres';
  /** Reads straight on the SQLite handle, where the store has one (see `sessionHead`). */
  readonly #direct: SyncQueryRun | undefined;
  /** Sessions' histories, several in one statement when reads wait (PostgreSQL). */
  readonly #sessionReads: SessionReads | undefined;
  readonly #leaseDatabase: (() => Kysely<LogDatabase>) | undefined;
  #lease: HostLease | undefined;
  /** The stamp each run or effect was staged under, for `mayStartEffect`. */
  readonly #stamps = new WeakMap<RuntimeEvent, WriterStamp>();
  readonly #queue: GroupCommit<PendingWrite>;
  readonly #limits: WriteLimits;
  readonly #router: BatchRouter;
  #closed: Promise<void> | undefined;

  private constructor(store: OpenDatabase, options: EventLogOptions) {
    this.#db = store.db;
    this.#dialect = store.dialect.name;
    this.#direct = store.direct;
    this.#leaseDatabase = store.leaseDatabase;
    this.#sessionReads = store.readers === undefined ? undefined : new SessionReads(store.db, store.readers);
    this.#limits = {
      maxEventBytes: options.maxEventBytes ?? 1024 * 1024,
      maxResultBytes: options.maxResultBytes ?? 32 * 1024 * 1024,
    };
    this.#router = new BatchRouter(store, options);
    this.#queue = new GroupCommit(this.#router, options.maxBatch ?? 256);
  }

  /** Opens the log at `target`, creating it and bringing its schema up to date. */
  static async open(target: LogTarget, options: EventLogOptions = {}): Promise<EventLog> {
    // PostgreSQL's driver loads only for logs that use it.
    const store =
      typeof target === 'string'
        ? openSqlite(target)
        : await (await import('./open-postgres.js')).openPostgres(target.postgres, {
            size: poolSize(target.pool),
            transactionBoundMs: options.transactionBoundMs,
          });
    try {
      await migrateToLatest(store.db, store.dialect.name);
    } catch (error) {
      await store.db.destroy();
      const where = typeof target === 'string' ? target : 'PostgreSQL';
      throw new EventLogError('open_failed', `cannot prepare the event log at ${where}`, { cause: error });
    }
    return new EventLog(store, options);
  }

  /**
   * Copies the whole log at `from` into a new log at `to` — SQLite to PostgreSQL when a
   * single host's log moves to several hosts, or back — then checks the copy. Every
   * row goes over as stored (sequences, bodies, both chains' digests, the rules' tables,
   * hosts' leases), read in one snapshot of `from` and written in one transaction of
   * `to`, which must be empty (`EventLogError` `target_not_empty` otherwise; nothing
   * written). The report's check recomputes the copy's chains through the source's head:
   * an anchor kept for `from` holds for `to`. A run live in `from` stays live there only:
   * in the copy its host's lease lapses and it is recovered as after a crash.
   * `options.onProgress` is told the rows of each table written so far, page by page.
   */
  static async copy(from: LogTarget, to: LogTarget, options: CopyOptions = {}): Promise<CopyReport> {
    // Opening a SQLite path creates a log there: a source that is not there is a mistake.
    if (typeof from === 'string' && from !== ':memory:' && !existsSync(from))
      throw new EventLogError('open_failed', `there is no log to copy at ${from}`);
    await using source = await EventLog.open(from);
    await using target = await EventLog.open(to);
    const dialects = { sourceDialect: source.#dialect, targetDialect: target.#dialect };
    const { rows, head } = await copyRows(source.#db, target.#db, { ...dialects, ...options });
    return { rows, head, report: await target.verifyChain({ anchors: head === undefined ? [] : [head] }) };
  }

  /** Commits `write` durably (with others, in one transaction) and says where it stands. */
  async append(write: EventWrite): Promise<StoredEvent> {
    const receipt = await this.commit(write);
    return { sequence: receipt.sequence, event: write.event };
  }

  /**
   * The `EventSink` contract: resolves once durable; rejects with `CommitError` —
   * `AppendRefusedError` when a rule refuses the write (nothing written).
   */
  commit(write: EventWrite): Promise<CommitReceipt> {
    return this.#enqueue(write, false);
  }

  /**
   * Commits `writes` in one transaction, in their order (one fsync for all of them): a
   * group is never split between batches, so after a crash the log holds all of it or
   * none of it. Each promise settles like `commit`'s for its write; the rules judge each
   * write in order, seeing the ones before it, and refuse a write alone. A write that does
   * not parse or fit, or a lease that may not start work, refuses the whole group before
   * anything is queued. A caller that needs no wait on some of the facts rides them along
   * with the next one that must be durable.
   *
   * `onHead` makes the group conditional: it commits only if the session of its first
   * write still ends at that head (`sessionHead`'s answer) when the group reaches the
   * store; else every write of it is refused `session_moved` and nothing is written. A
   * caller that built the group on what it last saw of the session (a prompt from its
   * own copy of the history) learns at the commit, instead of by a read before, that
   * another writer came in between.
   */
  commitTogether(
    writes: readonly EventWrite[],
    options: { readonly onHead?: SessionHead } = {},
  ): Promise<CommitReceipt>[] {
    const settles = packedMap(writes, () => {
      let settle!: Pick<PendingWrite, 'resolve' | 'reject'>;
      const promise = new Promise<CommitReceipt>((resolve, reject) => {
        settle = { resolve, reject };
      });
      return { promise, ...settle };
    });
    try {
      const onHead =
        options.onHead &&
        Object.freeze({ highWater: options.onHead.highWater, digest: options.onHead.digest });
      const staged = packedMap(writes, (write) => {
        const one = this.#stage(write, false);
        return onHead === undefined ? one : { ...one, onHead };
      });
      this.#queue.pushAll(packedMap(staged, (one, index) => ({ staged: one, ...settles[index]! })));
    } catch (error) {
      for (const settle of settles) settle.reject(error);
    }
    return packedMap(settles, (settle) => settle.promise);
  }

  /**
   * Commits a write of recovery: the first one of an invocation whose owner's lease has
   * expired by the database's clock moves it to this log's host (or to no live host,
   * for a log without a lease), and from then on the old owner's writes are refused as
   * `fenced`. Refused as `owner_live` while the owner's lease is live.
   */
  takeOver(write: EventWrite): Promise<CommitReceipt> {
    return this.#enqueue(write, true);
  }

  #enqueue(write: EventWrite, takeover: boolean): Promise<CommitReceipt> {
    return new Promise<CommitReceipt>((resolve, reject) => {
      this.#queue.push({ staged: this.#stage(write, takeover), resolve, reject });
    });
  }

  /** Checks what can be checked before the store and stages `write`; throws a refusal. */
  #stage(write: EventWrite, takeover: boolean): StagedWrite {
    if (this.#closed) throw new EventLogError('closed', 'the event log is closed');
    const lease = this.#lease;
    if (lease !== undefined && !takeover && startsWork(write) && !lease.canDispatch()) {
      const { hostId, epoch } = lease.stamp;
      throw new AppendRefusedError(
        'lease_expired',
        `host ${hostId} (epoch ${epoch}) could not renew its lease in time: it starts no new run or effect it might not own`,
      );
    }
    const staged = stageWrite(write, this.#limits, lease?.stamp);
    if (lease !== undefined && startsWork(write)) this.#stamps.set(write.event, lease.stamp);
    return takeover ? { ...staged, takeover } : staged;
  }

  /**
   * Registers this process as a host of the log, with a lease renewed in the
   * background: from then on every write is stamped with the host's id and epoch, and
   * an invocation it opens is its own until it ends or is taken over. Released on close.
   */
  async holdLease(options: LeaseOptions = {}): Promise<HostLease> {
    if (this.#lease !== undefined) throw new EventLogError('lease_held', 'this log already holds a lease');
    if (this.#closed) throw new EventLogError('closed', 'the event log is closed');
    const own = this.#leaseDatabase?.();
    const store = { db: own ?? this.#db, dialect: this.#dialect, ...(own ? { closesWithLease: true } : {}) };
    this.#lease = await HostLease.hold(store, options);
    return this.#lease;
  }

  /**
   * Whether the effect of `dispatch`, a T1 this log has just committed, may start:
   * always without a lease; with one, only under the epoch it was written with, while the
   * lease stays surely live for a margin more (see `HostLease.mayStartEffect`). The
   * `EventSink` side of the effect-start check.
   */
  mayStartEffect(dispatch?: RuntimeEvent): boolean {
    const lease = this.#lease;
    if (lease === undefined) return true;
    // A lease lost and registered again since the T1 was staged owns none of it.
    const stamp = dispatch === undefined ? undefined : this.#stamps.get(dispatch);
    if (stamp !== undefined && !sameOwner(stamp, lease.stamp)) return false;
    return lease.mayStartEffect();
  }

  /**
   * The database's clock now, in milliseconds since the epoch: deadlines the log
   * compares with its own clock (an approval's `expiresAt`) are computed from it, never
   * from the host's.
   */
  async databaseNow(): Promise<number> {
    if (this.#closed) throw new EventLogError('closed', 'the event log is closed');
    return databaseNow(this.#db, this.#dialect);
  }

  /** The lease this log holds, if any. */
  get lease(): HostLease | undefined {
    return this.#lease;
  }

  /**
   * How many durable commits (transactions that stored a fact, each waiting for its
   * WAL flush) and facts this log has committed since it was opened: the difference
   * across a piece of work is the fsyncs it waited for. See `LogStats`.
   */
  stats(): LogStats {
    return this.#router.stats();
  }

  /**
   * Starts the process's writer thread and opens this log there, resolving once it has;
   * at once for a log without one (PostgreSQL, in memory, `writerThread: false`). Batches
   * never wait for the thread to start — until it is ready they commit on the event
   * loop — so this is for a process that expects concurrent writers from its first
   * moment (a server) and would rather not block its loop with their first batches.
   * Rejects if the thread cannot open the log; writes then keep committing on the loop.
   */
  startWriterThread(): Promise<void> {
    return this.#router.startThread();
  }

  /** The whole log as a digested prefix; `bounds_exceeded` past the bounds. */
  prefix(bounds: ReadBounds): Promise<LogPrefix> {
    return prefixOf(this.#db, { kind: 'global' }, bounds);
  }

  /** One session's history as a digested prefix (the session's own chain). */
  scopedPrefix(scope: { session: string } | LogScope, bounds: ReadBounds): Promise<LogPrefix> {
    const resolved: LogScope = 'session' in scope ? { kind: 'session', id: scope.session } : scope;
    const reads = this.#sessionReads;
    return reads === undefined
      ? prefixOf(this.#db, resolved, bounds)
      : prefixOf(this.#db, resolved, bounds, (sessionId, own) => reads.read(sessionId, own));
  }

  /**
   * Where `sessionId` ended after this log's last commit to it (any writer of this
   * process that commits through it), or `undefined` if it has not written there since it
   * opened, or its last batch there failed. Other processes' writes are not seen: a
   * caller that builds on the answer commits on it as a condition (`commitTogether`'s
   * `onHead`), so the log refuses what another writer made stale.
   */
  committedHead(sessionId: string): SessionHead | undefined {
    return this.#router.heads.get(sessionId);
  }

  /**
   * Where a session's chain stands (`highWater` and digest equal those of its
   * `scopedPrefix`), without reading its events: a cached history is still the whole of
   * it when both match.
   */
  sessionHead(sessionId: string): Promise<SessionHead> {
    return sessionHead(this.#db, sessionId, this.#direct);
  }

  /** A page of events after `afterSequence`, optionally of one session. */
  read(options: {
    afterSequence?: number;
    limit?: number;
    scope?: { session: string };
  }): Promise<StoredEvent[]> {
    return readPage(this.#db, {
      afterSequence: options.afterSequence ?? 0,
      limit: Math.min(options.limit ?? 500, 10_000),
      sessionId: options.scope?.session,
    });
  }

  /** One invocation's events, in order, within the bounds. */
  async invocationEvents(invocation: Invocation, bounds: ReadBounds): Promise<StoredEvent[]> {
    const filter = { sessionId: invocation.sessionId, invocationId: invocation.invocationId };
    return (await readBounded(this.#db, filter, bounds)).events;
  }

  /** Uncertain operations and undispatched calls of one invocation. Runs no effect. */
  async invocationRecovery(invocation: Invocation, bounds: ReadBounds): Promise<InvocationRecovery> {
    const recovery = recoveryOf(await this.invocationEvents(invocation, bounds));
    const ownership = await this.invocationOwnership(invocation);
    return ownership === undefined ? recovery : { ...recovery, ownership };
  }

  /** Who owns `invocation` and whether its lease is live, by the database's clock. */
  invocationOwnership(invocation: Invocation): Promise<InvocationOwnership | undefined> {
    return ownershipOf(this.#db, this.#dialect, invocation);
  }

  /** Invocations with no `invocation_ended`, oldest first, each with its owner and lease. */
  unfinishedOwnership(limit = 1000): Promise<UnfinishedInvocation[]> {
    return unfinishedWithOwners(this.#db, this.#dialect, limit);
  }

  /** Invocations with no `invocation_ended`, oldest first. */
  unfinishedInvocations(limit = 1000): Promise<Invocation[]> {
    return unfinished(this.#db, limit);
  }

  /**
   * Approvals waiting for a person or for a continuation, across sessions (or in one),
   * oldest first: requested by an invocation that parked for them and neither dispatched
   * nor rejected since. A decided one carries its `decision` until it is continued.
   */
  pendingApprovals(
    options: { readonly sessionId?: string; readonly limit?: number } = {},
  ): Promise<PendingApproval[]> {
    return pendingApprovals(this.#db, { sessionId: options.sessionId, limit: options.limit ?? 1000 });
  }

  /** Parked approvals still undecided past their deadline by the database's clock. */
  expiredApprovals(limit = 1000): Promise<PendingApproval[]> {
    return pendingApprovals(this.#db, { limit, expiredBy: this.#dialect });
  }

  /**
   * Every approval one invocation requested, in request order, with where its operation
   * stands: what a continuation of a parked run dispatches, rejects, or skips.
   */
  invocationApprovals(invocation: {
    readonly sessionId: string;
    readonly invocationId: string;
  }): Promise<InvocationApproval[]> {
    return invocationApprovals(this.#db, invocation);
  }

  /**
   * The sessions that hold an operation with this id, in name order: an id is unique
   * within its session, not across sessions. Every operation has a row from its first
   * fact on (its dispatch, rejection or approval request), so this reads that table
   * rather than the events, for an operator who names an operation without its session.
   */
  operationSessions(operationId: string): Promise<string[]> {
    return operationSessions(this.#db, operationId);
  }

  /** The stored result a `tool_settled` (or `tool_reconciled`) event points at. */
  resolveToolResult(sessionId: string, eventId: string): Promise<ToolResult> {
    return readToolResult(this.#db, sessionId, eventId);
  }

  /**
   * The stored results of many events of `sessionId`, by event id, each checked as
   * `resolveToolResult` checks it, in a few statements; an id with no stored result is
   * left out. For a reader that needs a whole session's results (a replay).
   */
  resolveToolResults(sessionId: string, eventIds: readonly string[]): Promise<Map<string, ToolResult>> {
    return readToolResults(this.#db, sessionId, eventIds);
  }

  /**
   * The invocation whose opening took the submitter's `key` in `sessionId`, with its
   * events so far (one statement); `undefined` when none did. Keys are kept as long as
   * the session's facts: a key is never free again in its session.
   */
  submission(sessionId: string, key: string, bounds: ReadBounds): Promise<Submission | undefined> {
    return readSubmission(this.#db, { sessionId, key }, bounds);
  }

  /** Where a run ended (or stood at `boundary`): the start of a continuation or handoff. */
  async runSource(sessionId: string, runId: string, boundary?: number): Promise<RunSource | undefined> {
    const end = await runEnd(this.#db, { sessionId, runId, upTo: boundary });
    if (end === undefined) return undefined;
    const row = await this.#db
      .selectFrom('invocations')
      .select(['turn_id', 'run_id'])
      .where('session_id', '=', sessionId)
      .where('invocation_id', '=', end.invocationId)
      .executeTakeFirstOrThrow();
    const invocation = { sessionId, turnId: row.turn_id, runId: row.run_id, invocationId: end.invocationId };
    return { boundary: { invocation, highWater: end.sequence, digest: end.digest } };
  }

  /**
   * Where a fork of `sessionId` at `at` (an invocation id or a step id; default: the
   * last invocation that ended) starts: the boundary a `session_forked` records. Reads
   * only; the log's rules check the boundary again when the fork is appended.
   */
  forkPoint(sessionId: string, at?: string): Promise<ForkPoint> {
    return resolveForkPoint(this.#db, sessionId, at);
  }

  /**
   * Recomputes every chain digest from the stored bytes and compares, and checks the
   * chain still passes through each of `options.anchors`; reports the first break and
   * the last event that checked out. Reads the log in pages, holding no more than one.
   */
  verifyChain(options: VerifyOptions = {}): Promise<ChainReport> {
    return verifyChain(this.#db, options);
  }

  /** Waits for queued writes, then closes the store. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      await this.#queue.idle();
      await this.#lease?.release();
      await this.#router.close();
      await this.#db.destroy();
    })();
    return this.#closed;
  }

  /** Same as `close`: flushes every queued write, then releases the store. */
  shutdown(): Promise<void> {
    return this.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** The PostgreSQL pool size asked for, checked before anything connects. */
function poolSize(pool: unknown): number {
  if (pool === undefined) return DEFAULT_POOL;
  if (typeof pool !== 'number' || !Number.isInteger(pool) || pool < 1 || pool > MAX_POOL) {
    throw new EventLogError(
      'invalid_option',
      `pool must be an integer from 1 to ${MAX_POOL} (connections to PostgreSQL), got ${String(pool)}`,
    );
  }
  return pool;
}

const DEFAULT_POOL = 4;
const MAX_POOL = 100;

/** Facts that start something new: a run, or an effect (its T1). */
function startsWork(write: EventWrite): boolean {
  const kind = write.event.fact.kind;
  return kind === 'invocation_opened' || kind === 'tool_dispatched';
}
