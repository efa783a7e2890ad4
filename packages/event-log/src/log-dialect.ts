import { CompiledQuery } from 'kysely';

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
 * writer position, and whether state read in an earlier transaction can be trusted.
 * Statements are compiled once: building them costs more than SQLite spends running
 * them, and they run on every batch.
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
   * A token that changes whenever another connection committed since the last call,
   * or `undefined` when the store cannot tell (then nothing is cached across batches).
   */
  changeToken(): Statements<number | undefined>;
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
  *changeToken() {
    const rows = yield* run(dataVersion as CompiledQuery<{ data_version: number }>);
    return rows[0]?.data_version;
  },
};

/** PostgreSQL: one transaction-scoped advisory lock serialises the chain's writers across hosts. */
export const postgresDialect: LogDialect = {
  name: 'postgres',
  begin: [CompiledQuery.raw('begin'), CompiledQuery.raw('select pg_advisory_xact_lock(7310512201)')],
  commit: CompiledQuery.raw('commit'),
  rollback: CompiledQuery.raw('rollback'),
  rowsPerInsert: 500,
  clock: CompiledQuery.raw('select (extract(epoch from statement_timestamp()) * 1000)::bigint as now'),
  // biome-ignore lint/correctness/useYield: PostgreSQL has no token; the generator asks for nothing.
  *changeToken() {
    return undefined;
  },
};
