import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Hosts and their leases, and who owns each invocation. A host's lease is a row whose
 * `expires_at` only the database's clock writes (`renewed_at + ttl_ms`); an invocation
 * names its owner's host and epoch, and `fence` counts the takeovers that moved it.
 * Invocations opened before this migration have no owner: any recovery may end them,
 * as before.
 */
export const hostsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('hosts')
      .addColumn('host_id', 'text', (c) => c.primaryKey())
      .addColumn('epoch', 'bigint', (c) => c.notNull())
      .addColumn('pid', 'integer', (c) => c.notNull())
      .addColumn('hostname', 'text', (c) => c.notNull())
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('ttl_ms', 'bigint', (c) => c.notNull())
      .addColumn('renewed_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.alterTable('invocations').addColumn('owner_host_id', 'text').execute();
    await db.schema.alterTable('invocations').addColumn('owner_epoch', 'bigint').execute();
    await db.schema
      .alterTable('invocations')
      .addColumn('fence', 'integer', (c) => c.notNull().defaultTo(sql.lit(0)))
      .execute();
  },
};
