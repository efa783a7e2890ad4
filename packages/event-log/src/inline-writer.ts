import { commitBatch } from './batch-commit.js';
import type { OpenDatabase } from './open-database.js';
import { RuleCache } from './rule-cache.js';
import type { BatchInfo, BatchWriter } from './staged-write.js';

/**
 * Commits on the event loop through the log's own connection: PostgreSQL (its driver
 * never blocks), a lone SQLite write, and every SQLite batch of a log without a writer
 * thread (in memory, or opened with `writerThread: false`).
 */
export function inlineWriter(
  store: OpenDatabase,
  beforeCommit: ((batch: BatchInfo) => void) | undefined,
): BatchWriter {
  const { db, dialect, direct, transact } = store;
  const context = { dialect, cache: new RuleCache(), beforeCommit, direct, transact };
  return {
    committer: 'event_loop',
    // SQLite runs its statements synchronously; PostgreSQL answers through sockets.
    endsInIo: direct === undefined,
    write: (batch) => commitBatch(db, context, batch),
    close: async () => undefined,
  };
}
