import { type Kysely, type Migration, sql } from 'kysely';
import { EventLogError } from './event-log-error.js';

/**
 * Where applied migrations are written down. The name and columns are those of Kysely's
 * own migrator, which earlier releases used: logs made by them open unchanged.
 */
const BOOKKEEPING = 'kysely_migration';

/**
 * The key of the transaction-scoped advisory lock that serialises PostgreSQL migrations.
 * Advisory locks are per database, and this key differs from the chain's writer lock.
 */
const POSTGRES_MIGRATION_LOCK = 7310512202;

/**
 * Applies the pending `migrations` (in name order), each in its own transaction together
 * with the row that records it, under one lock shared by every process that opens the
 * log: `BEGIN IMMEDIATE` on SQLite (the file's writer lock, waited for through the busy
 * timeout), a transaction-scoped advisory lock on PostgreSQL. A process killed at any
 * point leaves each migration applied and recorded, or neither; a process that waited
 * for the lock finds the migrations the others applied and skips them. A log already up
 * to date is seen without taking the lock. A failure is an `open_failed` error naming the migration.
 */
export async function runMigrations(
  db: Kysely<unknown>,
  dialect: 'sqlite' | 'postgres',
  migrations: Readonly<Record<string, Migration>>,
): Promise<void> {
  const names = Object.keys(migrations).sort();
  if ((await appliedOutsideLock(db)).size === names.length) return;
  for (;;) {
    const next = await db.connection().execute(async (connection) => {
      await lock(connection, dialect);
      try {
        await sql`create table if not exists ${sql.table(BOOKKEEPING)} (name varchar(255) not null primary key, timestamp varchar(255) not null)`.execute(
          connection,
        );
        const applied = await appliedNames(connection);
        const name = names.find((candidate) => !applied.has(candidate));
        if (name !== undefined) {
          await runOne(connection, name, migrations[name] as Migration);
          await sql`insert into ${sql.table(BOOKKEEPING)} (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(
            connection,
          );
        }
        await sql`commit`.execute(connection);
        return name;
      } catch (error) {
        await sql`rollback`.execute(connection).catch(() => undefined);
        throw error;
      }
    });
    if (next === undefined) return;
  }
}

async function runOne(connection: Kysely<unknown>, name: string, migration: Migration): Promise<void> {
  try {
    await migration.up(connection);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new EventLogError('open_failed', `event log migration ${name} failed: ${reason}`, { cause: error });
  }
}

async function lock(connection: Kysely<unknown>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  if (dialect === 'sqlite') {
    await sql`begin immediate`.execute(connection);
    return;
  }
  await sql`begin`.execute(connection);
  try {
    await sql`select pg_advisory_xact_lock(${sql.lit(POSTGRES_MIGRATION_LOCK)})`.execute(connection);
  } catch (error) {
    await sql`rollback`.execute(connection).catch(() => undefined);
    throw error;
  }
}

async function appliedNames(db: Kysely<unknown>): Promise<Set<string>> {
  const { rows } = await sql<{ name: string }>`select name from ${sql.table(BOOKKEEPING)}`.execute(db);
  return new Set(rows.map((row) => row.name));
}

/** What is applied, read without the lock; nothing when the log is new. */
async function appliedOutsideLock(db: Kysely<unknown>): Promise<Set<string>> {
  try {
    return await appliedNames(db);
  } catch {
    return new Set();
  }
}
