import { type Kysely, type Migration, sql } from 'kysely';
import type { LogDatabase } from './log-schema.js';
import { hostsMigration } from './migration-0003-hosts.js';
import { approvalsMigration } from './migration-0004-approvals.js';
import { oneLiveIndexMigration } from './migration-0005-one-live-index.js';
import { submissionKeysMigration } from './migration-0006-submission-keys.js';
import { runMigrations } from './run-migrations.js';

/**
 * The log's schema. Uniqueness that the promise depends on is a constraint, not a
 * check in one process's memory: a second dispatch of an operation violates the
 * operations primary key, a second live invocation in a session violates the partial
 * unique index on `invocations (session_id) WHERE live = 1`.
 */
function migrationsFor(dialect: 'sqlite' | 'postgres'): Record<string, Migration> {
  return {
    '0001_events': {
      async up(db: Kysely<unknown>) {
        await createEvents(db, 'events', dialect === 'sqlite' ? 'integer' : 'bigint');
        await createEventIndexes(db);
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
    '0002_sqlite_sequence_is_rowid': {
      async up(db: Kysely<unknown>) {
        if (dialect === 'sqlite') await sequenceAsRowid(db);
      },
    },
    '0003_hosts_and_leases': hostsMigration,
    '0004_approvals': approvalsMigration,
    '0005_one_live_index': oneLiveIndexMigration,
    '0006_submission_keys': submissionKeysMigration,
  };
}

/**
 * The events table, keyed by sequence. On SQLite the key is `integer primary key`, an
 * alias of the rowid: declared `bigint` it was a second b-tree that every append wrote
 * (about a fifth more WAL per event).
 */
async function createEvents(
  db: Kysely<unknown>,
  name: string,
  sequence: 'integer' | 'bigint',
): Promise<void> {
  await db.schema
    .createTable(name)
    .addColumn('sequence', sequence, (c) => c.primaryKey())
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
}

async function createEventIndexes(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('events_by_session').on('events').columns(['session_id', 'sequence']).execute();
  await db.schema
    .createIndex('events_by_invocation')
    .on('events')
    .columns(['session_id', 'invocation_id', 'sequence'])
    .execute();
}

/**
 * Rebuilds a SQLite events table made with a `bigint` key into one keyed by the rowid,
 * row for row (bytes and digests unchanged). It runs inside its migration's transaction:
 * a crash leaves the old table or the new one. Skips a table already keyed by the rowid.
 */
async function sequenceAsRowid(db: Kysely<unknown>): Promise<void> {
  const columns = await sql<{ name: string; type: string; pk: number }>`pragma table_info(events)`.execute(
    db,
  );
  const sequence = columns.rows.find((column) => column.name === 'sequence');
  if (sequence?.type.toLowerCase() === 'integer' && sequence.pk === 1) return;
  await createEvents(db, 'events_rowid', 'integer');
  await sql`insert into events_rowid select sequence, event_id, session_id, invocation_id, run_id, kind, operation_id, body, bytes, digest, session_digest from events order by sequence`.execute(
    db,
  );
  await sql`drop table events`.execute(db);
  await sql`alter table events_rowid rename to events`.execute(db);
  await createEventIndexes(db);
}

/**
 * Brings the schema up to date: one migration per transaction with its bookkeeping,
 * under a lock every opener shares (see `runMigrations`). Safe to call from any number
 * of processes at once, and after a kill at any point.
 */
export async function migrateToLatest(
  db: Kysely<LogDatabase>,
  dialect: 'sqlite' | 'postgres',
): Promise<void> {
  await runMigrations(db as unknown as Kysely<unknown>, dialect, migrationsFor(dialect));
}
