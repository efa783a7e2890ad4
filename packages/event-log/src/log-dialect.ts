import { CompiledQuery } from 'kysely';
import type { LeaseView, WriterStamp } from './invocation-owner.js';
import { leaseRefusal, postgresLeaseCheck, postgresLeaseGuard } from './lease-guard.js';
import { freshSessionsGuard, headMoved, oneTripOpening, SESSION_NOT_NEW } from './postgres-one-trip.js';
import type { ChainHead, RuleCache } from './rule-cache.js';

/**
 * A batch's statements as a generator: it yields each compiled statement and is handed
 * back that statement's rows. The same rules and writes then run synchronously on a
 * SQLite handle (`runSync`: nothing else in the thread can run between `BEGIN` and
 * `COMMIT`) or through an asynchronous driver (`runAsync`, PostgreSQL).
 */
export type Statements<T> = Generator<CompiledQuery, T, unknown[]>;

/** One statement inside a `Statements` generator, typed by its rows. */
export function* run<R>(query: CompiledQuery<R>): Statements<R[]> {
  return (yield query) as R[];
}

/** Runs a statement now and returns its rows (a SQLite handle). */
export type SyncQueryRun = (query: CompiledQuery) => unknown[];

/** Runs every statement of `steps` synchronously. */
export function runSync<T>(steps: Statements<T>, execute: SyncQueryRun): T {
  let step = steps.next();
  while (!step.done) {
    let result: unknown[];
    try {
      result = execute(step.value);
    } catch (error) {
      step = steps.throw(error);
      continue;
    }
    step = steps.next(result);
  }
  return step.value;
}

/** Runs a transaction's statements on one connection of an asynchronous store. */
export type Transact = <T>(steps: Statements<T>) => Promise<T>;

/** Runs every statement of `steps`, awaiting each. */
export async function runAsync<T>(
  steps: Statements<T>,
  execute: (query: CompiledQuery) => Promise<unknown[]>,
): Promise<T> {
  let step = steps.next();
  while (!step.done) {
    let result: unknown[];
    try {
      result = await execute(step.value);
    } catch (error) {
      step = steps.throw(error);
      continue;
    }
    step = steps.next(result);
  }
  return step.value;
}

/**
 * What differs between the stores: how a write transaction takes the log's single
 * writer position, and how much of the state read in earlier transactions can be
 * trusted. Statements are compiled once: building them costs more than SQLite spends
 * running them, and they run on every batch.
 */
export interface LogDialect {
  readonly name: 'sqlite' | 'postgres';
  /** Statements that open a write transaction holding the writer position. */
  readonly begin: readonly CompiledQuery[];
  readonly commit: CompiledQuery;
  readonly rollback: CompiledQuery;
  /** Event rows per insert statement: many where each statement is a round trip. */
  readonly rowsPerInsert: number;
  /** The database's clock, in milliseconds since the epoch: leases expire by it. */
  readonly clock: CompiledQuery<{ now: number }>;
  /**
   * Runs first inside the write transaction, after `begin`: drops from `cache` what
   * other connections changed since it was filled, and may set the chain's head.
   */
  refresh(cache: RuleCache): Statements<void>;
  /** Whether a failed `COMMIT` certainly kept nothing of the transaction. */
  refusedAtCommit(error: unknown): boolean;
  /** Whether a statement failed on the unique index of event ids (a repeated id). */
  repeatsEventId(error: unknown): boolean;
  /**
   * A statement sent in the same message as `COMMIT` that fails the transaction unless
   * `writer`'s lease is still live by the database's clock when the message arrives
   * (see `leaseGuard`); absent where nothing can come between the rules and `COMMIT`.
   */
  readonly leaseGuard?: (writer: WriterStamp) => CompiledQuery;
  /** Whether a transaction failed on its `leaseGuard`. */
  readonly lapsedAtCommit?: (error: unknown) => boolean;
  /**
   * Where a batch whose rules' state is all cached can go as one message: the statement
   * that opens its transaction and checks that the chain's head is still `head`, sent
   * with the writes and `COMMIT` (see `oneTripOpening`).
   */
  readonly oneTrip?: (head: ChainHead) => CompiledQuery;
  /** Whether a transaction failed on the head check of `oneTrip`: nothing of it was kept. */
  readonly headMoved?: (error: unknown) => boolean;
  /**
   * With `oneTrip`: a statement sent with `COMMIT` that fails the transaction unless
   * `writer`'s own lease allows new work — all the rules check of it (see
   * `postgresLeaseCheck`) — so a batch that starts leased work needs no read under the lock.
   */
  readonly leaseCheck?: (writer: WriterStamp) => CompiledQuery;
  /**
   * With `oneTrip`: a statement sent with `COMMIT` that fails the transaction (so that
   * `assumedNew` holds) if the log holds a fact, or an admission row, of any of
   * `sessionIds` — the sessions a one-message batch took for new (see `oneTripFits`).
   */
  readonly freshSessions?: (sessionIds: readonly string[]) => CompiledQuery;
  /**
   * Whether a transaction failed on the key of the invocations or operations table, or
   * on `freshSessions`: an opening, a dispatch or a session a one-message batch took for
   * new was not (nothing was kept).
   */
  readonly assumedNew?: (error: unknown) => boolean;
  /** The lease a transaction's `leaseCheck` refused, as the rules see it; nothing was kept. */
  readonly leaseRefusal?: (error: unknown) => LeaseView | undefined;
}

/** SQLite refused a statement for the write lock (`SQLITE_BUSY` and its extended codes). */
export function sqliteBusy(error: unknown): boolean {
  return String(field(error, 'code')).startsWith('SQLITE_BUSY');
}

function field(error: unknown, name: string): unknown {
  return typeof error === 'object' && error !== null ? (error as Record<string, unknown>)[name] : undefined;
}

const dataVersion = CompiledQuery.raw('pragma data_version');

/** SQLite: `BEGIN IMMEDIATE` takes the write lock; `PRAGMA data_version` tells of other writers. */
export const sqliteDialect: LogDialect = {
  name: 'sqlite',
  begin: [CompiledQuery.raw('begin immediate')],
  commit: CompiledQuery.raw('commit'),
  rollback: CompiledQuery.raw('rollback'),
  rowsPerInsert: 1,
  clock: CompiledQuery.raw(`select cast((julianday('now') - 2440587.5) * 86400000 as integer) as now`),
  // SQLite cannot say what another connection wrote, only that it wrote: then all goes.
  *refresh(cache) {
    const rows = yield* run(dataVersion as CompiledQuery<{ data_version: number }>);
    const token = rows[0]?.data_version;
    if (token === undefined || token !== cache.token) cache.reset();
    cache.token = token;
  },
  refusedAtCommit: () => false,
  repeatsEventId: (error) =>
    field(error, 'code') === 'SQLITE_CONSTRAINT_UNIQUE' &&
    String(field(error, 'message')).includes('events.event_id'),
};

/** The key of the advisory lock that makes one writer of the chain at a time. */
export const chainLock = 7310512201;

/**
 * How many events of other writers the refresh looks through for the sessions they
 * wrote; past it, the whole cache goes.
 */
export const REFRESH_WINDOW = 10_000;

/**
 * PostgreSQL: one transaction-scoped advisory lock serialises the chain's writers across
 * hosts. The lock is the fleet's bottleneck — every other writer waits while it is held
 * — so the transaction is opened, the lock taken and the chain's head read in one round
 * trip, and the rules' state is kept between batches: the sessions other writers wrote
 * since this cache's head are read with the head, and only theirs are dropped. Runs
 * through `runPipelined`, which sends the batch's writes with its `COMMIT`. A batch whose
 * rules' state is all cached skips that first trip (`oneTrip`): the whole transaction
 * goes as one message, the head it assumes checked by the server.
 */
export const postgresDialect: LogDialect = {
  name: 'postgres',
  begin: [],
  commit: CompiledQuery.raw('commit'),
  rollback: CompiledQuery.raw('rollback'),
  rowsPerInsert: 500,
  clock: CompiledQuery.raw('select (extract(epoch from statement_timestamp()) * 1000)::bigint as now'),
  *refresh(cache) {
    const known = cache.head?.sequence;
    // Statements of one message each take their own snapshot (read committed): the head
    // is read after the lock is granted, so it includes the last holder's commit.
    const changed =
      known === undefined
        ? 'null::text[]'
        : `(select array_agg(distinct c.session_id) from events c where c.sequence > ${integer(known)} and c.sequence <= ${integer(known + REFRESH_WINDOW)})`;
    const rows = yield* run(
      CompiledQuery.raw(
        `begin; select pg_advisory_xact_lock(${chainLock}); select e.sequence, e.digest, ${changed} as changed from events e order by e.sequence desc limit 1`,
      ) as CompiledQuery<{ sequence: number; digest: string; changed: string[] | null }>,
    );
    const row = rows[0];
    const head =
      row === undefined
        ? { sequence: 0, digest: '' }
        : { sequence: Number(row.sequence), digest: row.digest };
    if (known !== undefined) cache.quietRefreshes = head.sequence === known ? cache.quietRefreshes + 1 : 0;
    if (known === undefined || head.sequence < known || head.sequence > known + REFRESH_WINDOW) {
      cache.reset();
    } else if (head.sequence > known) {
      cache.forgetSessions(row?.changed ?? []);
    }
    cache.head = head;
  },
  // The server ending a transaction whose client went quiet (25P03, see
  // `connectionSettings`) rolled it back: nothing of it was kept.
  refusedAtCommit: (error) =>
    (field(error, 'severity') === 'ERROR' && typeof field(error, 'code') === 'string') ||
    field(error, 'code') === '25P03',
  repeatsEventId: (error) =>
    field(error, 'code') === '23505' && field(error, 'constraint') === 'events_event_id_key',
  leaseGuard: postgresLeaseGuard,
  lapsedAtCommit: (error) => field(error, 'code') === '22012',
  oneTrip: (head) => oneTripOpening(head, chainLock),
  headMoved,
  leaseCheck: postgresLeaseCheck,
  leaseRefusal,
  freshSessions: freshSessionsGuard,
  assumedNew: (error) =>
    field(error, 'code') === SESSION_NOT_NEW ||
    (field(error, 'code') === '23505' &&
      (field(error, 'constraint') === 'operations_pk' || field(error, 'constraint') === 'invocations_pk')),
};

function integer(value: number): string {
  if (!Number.isSafeInteger(value)) throw new TypeError(`not a sequence: ${value}`);
  return String(value);
}
