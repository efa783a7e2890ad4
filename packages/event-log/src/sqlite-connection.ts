import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, type SqliteDatabase, SqliteDialect, type SqliteStatement } from 'kysely';
import { makeDurableDirectory, syncNewEntry } from './durable-directory.js';
import type { SyncQueryRun } from './log-dialect.js';
import type { LogDatabase } from './log-schema.js';

/** One connection to a SQLite log: through Kysely, and straight on the handle. */
export type SqliteConnection = { db: Kysely<LogDatabase>; direct: SyncQueryRun; wal: boolean };

/**
 * One connection to a SQLite log file (created if needed, with its directories, each
 * fsynced into its parent — see `makeDurableDirectory`) in WAL mode with
 * `synchronous=FULL` (and `fullfsync`, for macOS): `COMMIT` returns only once the WAL
 * frames are on disk, and other connections see a commit only after that. `wal` is false for an in-memory log.
 * `direct` runs a compiled statement on the handle with none of Kysely's executor
 * around it: a batch's statements cost a few microseconds each that way.
 * `busyTimeoutMs` (default 10 s) is how long a statement waits, blocking its thread,
 * for another connection's write lock before failing with `SQLITE_BUSY`.
 */
export function connectSqlite(
  path: string,
  options: { readonly busyTimeoutMs?: number } = {},
): SqliteConnection {
  const fresh = path !== ':memory:' && !existsSync(path);
  if (path !== ':memory:') makeDurableDirectory(dirname(path));
  const database = new Database(path);
  // First, so that switching a brand-new file to WAL, which needs a moment of exclusive
  // access, waits for another process opening the same file instead of failing.
  database.pragma('busy_timeout = 10000');
  const wal = switchToWal(database);
  database.pragma('synchronous = FULL');
  // On macOS a plain fsync leaves the data in the drive's cache, where a power cut loses
  // it: F_FULLFSYNC flushes the drive too. Elsewhere SQLite ignores the setting.
  database.pragma('fullfsync = ON');
  // A new file's entry in its directory is durable only once the directory is fsynced.
  if (fresh) syncNewEntry(dirname(path));
  const { busyTimeoutMs } = options;
  if (busyTimeoutMs !== undefined)
    database.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  const prepared = withStatementCache(database);
  const db = new Kysely<LogDatabase>({ dialect: new SqliteDialect({ database: prepared }) });
  // Parameters go as arguments: better-sqlite3 binds them faster than one array
  // (measured: about 4 of an insert's 20 µs).
  const direct: SyncQueryRun = (query) => {
    const statement = prepared.prepare(query.sql) as unknown as Database.Statement;
    if (statement.reader) return statement.all(...query.parameters);
    statement.run(...query.parameters);
    return [];
  };
  return { db, direct, wal };
}

/**
 * Switches the file to WAL. SQLite answers `SQLITE_BUSY` at once, without its busy
 * handler, when another process holds the file while it changes journal mode (several
 * processes opening a brand-new log): it is tried again for up to the busy timeout.
 */
function switchToWal(database: Database.Database): boolean {
  const deadline = Date.now() + 10_000;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      return database.pragma('journal_mode = WAL', { simple: true }) === 'wal';
    } catch (error) {
      const busy = (error as { code?: string }).code === 'SQLITE_BUSY';
      if (!busy || Date.now() >= deadline) throw error;
      // Opening is synchronous: wait a few milliseconds without spinning.
      Atomics.wait(pause, 0, 0, 5 + Math.floor(Math.random() * 20));
    }
  }
}

/**
 * Kysely prepares every statement anew; preparing costs more than running a small
 * insert. The log issues a handful of distinct statements, so it keeps them prepared.
 */
function withStatementCache(database: Database.Database): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => database.close(),
    prepare(text: string): SqliteStatement {
      let statement = statements.get(text);
      if (statement === undefined) {
        if (statements.size >= 256) statements.clear();
        statement = database.prepare(text) as unknown as SqliteStatement;
        statements.set(text, statement);
      }
      return statement;
    },
  };
}
