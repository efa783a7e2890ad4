import type { Kysely } from 'kysely';
import { EventLogError } from './event-log-error.js';
import { type LogDialect, type SyncQueryRun, sqliteDialect, type Transact } from './log-dialect.js';
import type { LogDatabase } from './log-schema.js';
import { connectSqlite } from './sqlite-connection.js';

/** An open store: the Kysely handle, what differs about its dialect, and its file. */
export type OpenDatabase = {
  readonly db: Kysely<LogDatabase>;
  readonly dialect: LogDialect;
  /** Runs a batch's statements straight on the SQLite handle. */
  readonly direct?: SyncQueryRun;
  /** Runs a batch's statements on one connection of the pool (PostgreSQL). */
  readonly transact?: Transact;
  /** How many reads the store serves at once (PostgreSQL: its read connections). */
  readonly readers?: number;
  /** A SQLite file in WAL mode, which a writer thread may open beside this connection. */
  readonly walFile?: string;
  /**
   * A connection of the host's lease's own, which never waits for the write lock
   * blocking the event loop (a SQLite file; see `HostLease`). Without it, the lease's
   * statements share `db`.
   */
  readonly leaseDatabase?: () => Kysely<LogDatabase>;
};

/** Opens (creating if needed) a SQLite log file; see `connectSqlite`. */
export function openSqlite(path: string): OpenDatabase {
  try {
    const { db, direct, wal } = connectSqlite(path);
    const file = wal ? { walFile: path, leaseDatabase: () => connectLease(path) } : {};
    return { db, direct, dialect: sqliteDialect, ...file };
  } catch (error) {
    throw new EventLogError('open_failed', `cannot open the event log at ${path}: ${String(error)}`, {
      cause: error,
    });
  }
}

/** The host lease's own connection to the SQLite file at `path`: no busy wait (see `HostLease`). */
function connectLease(path: string): Kysely<LogDatabase> {
  try {
    return connectSqlite(path, { busyTimeoutMs: 0 }).db;
  } catch (error) {
    const message = `cannot open the host lease's connection to ${path}: ${String(error)}`;
    throw new EventLogError('open_failed', message, { cause: error });
  }
}
