import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { KyselyPromptStore, type PromptTables } from './kysely-prompt-store.js';
import type { PromptStore } from './prompt-store.js';

/** Options of `openSqlitePromptStore`. */
export type SqlitePromptStoreOptions = {
  /** How long commit receipts stay readable (default one day). */
  readonly receiptRetentionMs?: number;
  /** Milliseconds SQLite waits for a lock before reporting a conflict (default 5000). */
  readonly busyTimeoutMs?: number;
  readonly signal?: AbortSignal;
};

const conflictCodes = new Set(['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_LOCKED']);

/**
 * Opens (or creates) a SQLite prompt store at `path`: WAL, `synchronous=FULL`, one
 * connection. This is the default store of an embedded conversation.
 *
 * @example
 * ```ts
 * const store = await openSqlitePromptStore('/var/lib/factum/prompts.sqlite');
 * ```
 */
export async function openSqlitePromptStore(
  path: string,
  options: SqlitePromptStoreOptions = {},
): Promise<PromptStore> {
  options.signal?.throwIfAborted();
  const database = connectDurably(path, options.busyTimeoutMs ?? 5000);
  try {
    const db = new Kysely<PromptTables>({ dialect: new SqliteDialect({ database }) });
    return await KyselyPromptStore.create(db, {
      isConflict: (error) => conflictCodes.has(String((error as { code?: unknown } | null)?.code)),
      receiptRetentionMs: options.receiptRetentionMs ?? 86_400_000,
      now: Date.now,
    });
  } catch (error) {
    database.close();
    throw error;
  }
}

/**
 * A connection whose commits return only once they are on stable storage: WAL with
 * `synchronous=FULL`, and `fullfsync` so that on macOS the fsync also flushes the drive's
 * cache (elsewhere SQLite ignores it). The busy timeout is set first, so that the first
 * statements wait for another process opening the same file.
 */
export function connectDurably(path: string, busyTimeoutMs: number): Database.Database {
  const database = new Database(path);
  try {
    database.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = FULL');
    database.pragma('fullfsync = ON');
    return database;
  } catch (error) {
    database.close();
    throw error;
  }
}
