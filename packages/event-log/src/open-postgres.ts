import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { boundedPool } from './bounded-pool.js';
import { EventLogError } from './event-log-error.js';
import { postgresDialect, type Statements } from './log-dialect.js';
import type { LogDatabase } from './log-schema.js';
import type { OpenDatabase } from './open-database.js';
import {
  connectionSettings,
  DEFAULT_TRANSACTION_BOUND_MS,
  hearClientErrors,
  withinBound,
} from './postgres-connection.js';
import { runPipelined } from './postgres-pipeline.js';

const INT8 = 20;

/**
 * Opens a log on PostgreSQL. Several processes on several hosts may open the same
 * database: the chain's single writer position is a transaction-scoped advisory lock,
 * and uniqueness (dispatches, live invocations) is enforced by the tables' keys.
 * `bigint` columns come back as numbers: sequences stay far below 2^53. No transaction
 * of the log stays open across a client that went quiet for `transactionBoundMs`.
 */
export async function openPostgres(
  url: string,
  options: { readonly size?: number; readonly transactionBoundMs?: number } = {},
): Promise<OpenDatabase> {
  const settings = {
    size: options.size ?? 4,
    boundMs: options.transactionBoundMs ?? DEFAULT_TRANSACTION_BOUND_MS,
  };
  let pools = poolsOf(url, false, settings);
  try {
    const setting = (
      await pools.reads.query<{ value: string }>(`select current_setting('synchronous_commit') as value`)
    ).rows[0]!.value;
    // With `synchronous_commit=off` the server acknowledges a commit before its WAL is
    // flushed, and a crash of the server can lose it: the log's connections ask for the
    // default instead. Every other value waits for at least the local flush, and stands.
    if (setting === 'off') {
      await pools.end();
      pools = poolsOf(url, true, settings);
      await pools.reads.query('select 1');
    }
  } catch (error) {
    await pools.end().catch(() => undefined);
    throw new EventLogError('open_failed', `cannot reach PostgreSQL at ${redact(url)}: ${describe(error)}`, {
      cause: error,
    });
  }
  const { reads, commits, end } = pools;
  return {
    db: new Kysely<LogDatabase>({
      dialect: new PostgresDialect({ pool: { ...boundedPool(reads, settings.boundMs * 10), end } }),
    }),
    dialect: postgresDialect,
    transact: (steps) => transact(commits, steps, settings.boundMs * 10),
    readers: Math.max(1, settings.size - 1),
  };
}

/**
 * The log's connections: one of them the commits' own, the rest for everything else
 * (reads, leases, migrations). A log has one batch in flight at a time, so with its own
 * connection a batch never waits in line behind reads: 32 sessions new to an engine read
 * their histories at once, and the batch of their first commits used to wait 10–23 ms
 * for a connection. With `size` 1 both share it.
 */
function poolsOf(
  url: string,
  durableCommits: boolean,
  settings: { readonly size: number; readonly boundMs: number },
): { readonly reads: pg.Pool; readonly commits: pg.Pool; end(): Promise<void> } {
  const reads = poolOf(url, durableCommits, { ...settings, size: Math.max(1, settings.size - 1) });
  const commits = settings.size > 1 ? poolOf(url, durableCommits, { ...settings, size: 1 }) : reads;
  return {
    reads,
    commits,
    async end() {
      await reads.end();
      if (commits !== reads) await commits.end();
    },
  };
}

/**
 * The log's `size` connections, bounded in time (see `connectionSettings`);
 * `durableCommits` makes each one say `synchronous_commit=on`.
 */
function poolOf(
  url: string,
  durableCommits: boolean,
  settings: { readonly size: number; readonly boundMs: number },
): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: settings.size,
    ...connectionSettings(settings.boundMs, durableCommits),
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8 ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle connection the server ends (a restart, a dropped database, an administrator)
  // is emitted on the pool; unheard, it would crash the process. The pool drops that
  // connection, and the next statement opens another or fails as a typed commit error.
  pool.on('error', () => undefined);
  hearClientErrors(pool);
  return pool;
}

/**
 * Runs a batch's transaction on one connection of the pool, straight through the driver
 * (see `runPipelined`). A connection whose transaction failed is closed rather than
 * reused: it may be mid-transaction or broken.
 */
async function transact<T>(pool: pg.Pool, steps: Statements<T>, boundMs: number): Promise<T> {
  const client = await pool.connect();
  try {
    const result = await withinBound(client, boundMs, runPipelined(steps, client));
    client.release();
    return result;
  } catch (error) {
    client.release(true);
    throw error;
  }
}

/** A connection string without its password, for messages. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the given PostgreSQL URL';
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
