import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { LogDatabase } from './log-schema.js';

/**
 * What differs between the stores: how a write transaction takes the log's single
 * writer position, and whether state read in an earlier transaction can be trusted.
 */
export interface LogDialect {
  readonly name: 'sqlite' | 'postgres';
  /** Statements that open a write transaction holding the writer position. */
  begin(): RawBuilder<unknown>[];
  /**
   * A token that changes whenever another connection committed since the last call,
   * or `undefined` when the store cannot tell (then nothing is cached across batches).
   */
  changeToken(db: Kysely<LogDatabase>): Promise<number | undefined>;
}

/** SQLite: `BEGIN IMMEDIATE` takes the write lock; `PRAGMA data_version` tells of other writers. */
export const sqliteDialect: LogDialect = {
  name: 'sqlite',
  begin: () => [sql`begin immediate`],
  async changeToken(db) {
    const result = await sql<{ data_version: number }>`pragma data_version`.execute(db);
    return result.rows[0]?.data_version;
  },
};

/** PostgreSQL: one transaction-scoped advisory lock serialises the chain's writers across hosts. */
export const postgresDialect: LogDialect = {
  name: 'postgres',
  begin: () => [sql`begin`, sql`select pg_advisory_xact_lock(7310512201)`],
  changeToken: async () => undefined,
};
