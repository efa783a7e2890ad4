import type { Kysely } from 'kysely';
import { acceptWrite, receiptOf } from './accept-write.js';
import { changesNothing, checkWrite, type RuleEffects } from './append-rules.js';
import type { BatchProgress } from './batch-commit.js';
import { eventInsert } from './insert-events.js';
import { ruleStateCached } from './load-rule-state.js';
import { type SyncQueryRun, sqliteBusy } from './log-dialect.js';
import type { LogDatabase } from './log-schema.js';
import type { RuleCache } from './rule-cache.js';
import { RuleRefusal } from './rule-refusal.js';
import type { StagedWrite } from './staged-write.js';

/**
 * Commits a lone write that changes nothing but the events table (a model fact, most
 * often) as one autocommit `INSERT` on a SQLite handle: no `BEGIN IMMEDIATE`, no
 * `PRAGMA data_version`, no `COMMIT` statement, which together cost as much as the
 * insert itself. The rules judge it against the cache, and the insert proves the cache
 * was the log's state: its row takes the cached head's sequence + 1, the table's
 * primary key, and every connection that changes what the rules read appends an event
 * at the head + 1 in the same transaction. So the insert succeeds only if no other
 * connection wrote since the cache was filled.
 *
 * Returns false, having stored nothing, when the write needs the full transaction:
 * something it names is not cached, a rule refuses it (a refusal is only trusted
 * inside the transaction that read the state), it changes other tables, or the insert
 * failed on a constraint or a busy log (another connection wrote first; the cache goes).
 * Any other failure may have happened at the implicit commit: it is thrown with
 * `progress.committing` set. Once committed, the write's outcome is in `progress`.
 */
export function commitLoneInsert(
  db: Kysely<LogDatabase>,
  cache: RuleCache,
  direct: SyncQueryRun,
  staged: StagedWrite,
  progress: BatchProgress,
): boolean {
  if (staged.result !== undefined || !ruleStateCached(cache, staged)) return false;
  let effects: RuleEffects;
  try {
    effects = checkWrite(staged, cache);
  } catch (error) {
    if (error instanceof RuleRefusal) return false;
    throw error;
  }
  if (!changesNothing(effects)) return false;
  const accepted = acceptWrite(cache, staged, effects);
  // The insert is its own commit.
  progress.committing = true;
  try {
    direct(eventInsert(db, accepted.row));
  } catch (cause) {
    if (!storedNothing(cause)) throw cause;
    progress.committing = false;
    cache.reset();
    return false;
  }
  progress.outcomes.push({ stored: receiptOf(accepted) });
  return true;
}

/**
 * SQLite refused the statement before writing: a constraint (another connection took
 * the sequence) or the write lock (`SQLITE_BUSY`, `SQLITE_BUSY_SNAPSHOT`).
 */
function storedNothing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT')) || sqliteBusy(error);
}
