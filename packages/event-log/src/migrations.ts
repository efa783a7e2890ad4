import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';
import type { LogDatabase } from './log-schema.js';

/**
 * The log's schema. Uniqueness that the promise depends on is a constraint, not a
 * check in one process's memory: a second dispatch of an operation violates the
 * operations primary key, a second live invocation in a session violates the partial
 * unique index on `invocations (session_id) WHERE live = 1`.
 */
const migrations: Record<string, Migration> = {
  '0001_events': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('events')
        .addColumn('sequence', 'bigint', (c) => c.primaryKey())
        .addColumn('event_id', 'text', (c) => c.notNull().unique())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('invocation_id', 'text', (c) => c.notNull())
        .addColumn('run_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('operation_id', 'text')
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('bytes', 'integer', (c) => c.notNull())
        .addColumn('digest', 'text', (c) => c.notNull())
        .addColumn('session_digest', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('events_by_session')
        .on('events')
        .columns(['session_id', 'sequence'])
        .execute();
      await db.schema
        .createIndex('events_by_invocation')
        .on('events')
        .columns(['session_id', 'invocation_id', 'sequence'])
        .execute();
      await db.schema
        .createTable('invocations')
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('invocation_id', 'text', (c) => c.notNull())
        .addColumn('turn_id', 'text', (c) => c.notNull())
        .addColumn('run_id', 'text', (c) => c.notNull())
        .addColumn('opened_sequence', 'bigint', (c) => c.notNull())
        .addColumn('ended_sequence', 'bigint')
        .addColumn('terminal', 'text')
        .addColumn('live', 'integer')
        .addPrimaryKeyConstraint('invocations_pk', ['session_id', 'invocation_id'])
        .execute();
      await db.schema
        .createIndex('one_live_invocation_per_session')
        .on('invocations')
        .column('session_id')
        .unique()
        .where(sql.ref('live'), '=', 1)
        .execute();
      await db.schema
        .createIndex('invocations_unfinished')
        .on('invocations')
        .column('opened_sequence')
        .where(sql.ref('ended_sequence'), 'is', null)
        .execute();
      await db.schema
        .createIndex('invocations_by_run')
        .on('invocations')
        .columns(['session_id', 'run_id', 'opened_sequence'])
        .execute();
      await db.schema
        .createTable('operations')
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('operation_id', 'text', (c) => c.notNull())
        .addColumn('invocation_id', 'text', (c) => c.notNull())
        .addColumn('parent_operation_id', 'text')
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('sequence', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('operations_pk', ['session_id', 'operation_id'])
        .execute();
      await db.schema
        .createTable('sessions')
        .addColumn('session_id', 'text', (c) => c.primaryKey())
        .addColumn('live_invocation_id', 'text')
        .addColumn('held_for_invocation_id', 'text')
        .execute();
      await db.schema
        .createTable('tool_results')
        .addColumn('event_id', 'text', (c) => c.primaryKey())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('digest', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .execute();
    },
  },
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Brings the schema up to date; a failure names the migration that failed. */
export async function migrateToLatest(db: Kysely<LogDatabase>): Promise<void> {
  const { error, results } = await new Migrator({ db, provider }).migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`event log migration ${failed} failed`, { cause: error });
  }
}
