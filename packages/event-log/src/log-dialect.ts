import { CompiledQuery, type Kysely } from 'kysely';
import type { LogDatabase } from './log-schema.js';

/**
 * Runs one compiled statement inside a batch's transaction and returns its rows.
 * Statements are built with Kysely and run either through its connection (PostgreSQL)
 * or straight on the SQLite handle, which skips Kysely's executor on every statement.
 */
export type QueryRun = <R>(query: CompiledQuery<R>) => Promise<R[]>;

/** What a batch's statements are built with (never run through) and run by. */
export type BatchStatements = { readonly builder: Kysely<LogDatabase>; readonly run: QueryRun };

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
  /**
   * A token that changes whenever another connection committed since the last call,
   * or `undefined` when the store cannot tell (then nothing is cached across batches).
   */
  changeToken(run: QueryRun): Promise<number | undefined>;
}

const dataVersion = CompiledQuery.raw('pragma data_version');

/** SQLite: `BEGIN IMMEDIATE` takes the write lock; `PRAGMA data_version` tells of other writers. */
export const sqliteDialect: LogDialect = {
  name: 'sqlite',
  begin: [CompiledQuery.raw('begin immediate')],
  commit: CompiledQuery.raw('commit'),
  rollback: CompiledQuery.raw('rollback'),
  rowsPerInsert: 1,
  async changeToken(run) {
    const rows = await run(dataVersion as CompiledQuery<{ data_version: number }>);
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
  changeToken: async () => undefined,
};
