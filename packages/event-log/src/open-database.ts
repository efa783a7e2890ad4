import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, type SqliteDatabase, SqliteDialect, type SqliteStatement } from 'kysely';
import { EventLogError } from './event-log-error.js';
import { type LogDialect, sqliteDialect } from './log-dialect.js';
import type { LogDatabase } from './log-schema.js';
import { WalDurability } from './wal-durability.js';

/**
 * An open store: the Kysely handle, what differs about its dialect, and — for a SQLite
 * file — how a batch is made durable (see `WalDurability`).
 */
export type OpenDatabase = {
  readonly db: Kysely<LogDatabase>;
  readonly dialect: LogDialect;
  readonly durability?: WalDurability;
};

/**
 * Opens (creating if needed) a SQLite log file in WAL mode, `synchronous=FULL` unless a
 * batch chooses to sync the WAL itself: a write is acknowledged only once it is on disk.
 */
export function openSqlite(path: string): OpenDatabase {
  try {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const database = new Database(path);
    // Without a WAL (an in-memory log) every commit keeps FULL.
    const wal =
      database.pragma('journal_mode = WAL', { simple: true }) === 'wal' ? new WalDurability(path) : undefined;
    database.pragma('synchronous = FULL');
    database.pragma('busy_timeout = 10000');
    const close = () => {
      wal?.close();
      database.close();
    };
    return {
      db: new Kysely<LogDatabase>({
        dialect: new SqliteDialect({ database: withStatementCache(database, close) }),
      }),
      dialect: sqliteDialect,
      durability: wal,
    };
  } catch (error) {
    throw new EventLogError('open_failed', `cannot open the event log at ${path}: ${String(error)}`, {
      cause: error,
    });
  }
}

/**
 * Kysely prepares every statement anew; preparing costs more than running a small
 * insert. The log issues a handful of distinct statements, so it keeps them prepared.
 */
function withStatementCache(database: Database.Database, close: () => void): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close,
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
