import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, type SqliteDatabase, SqliteDialect, type SqliteStatement } from 'kysely';
import { EventLogError } from './event-log-error.js';
import { type LogDialect, sqliteDialect } from './log-dialect.js';
import type { LogDatabase } from './log-schema.js';

/** An open store: the Kysely handle and what differs about its dialect. */
export type OpenDatabase = { readonly db: Kysely<LogDatabase>; readonly dialect: LogDialect };

/**
 * Opens (creating if needed) a SQLite log file. WAL with `synchronous=FULL`: a commit
 * returns only after the WAL is fsynced, which is what "durable" means here.
 */
export function openSqlite(path: string): OpenDatabase {
  try {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const database = new Database(path);
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = FULL');
    database.pragma('busy_timeout = 10000');
    return {
      db: new Kysely<LogDatabase>({ dialect: new SqliteDialect({ database: withStatementCache(database) }) }),
      dialect: sqliteDialect,
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
