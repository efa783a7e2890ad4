import type { Kysely } from 'kysely';
import { acceptWrite } from './accept-write.js';
import { changesNothing, checkWrite, type RuleEffects } from './append-rules.js';
import { eventInsert } from './insert-events.js';
import { ruleStateCached } from './load-rule-state.js';
import type { SyncQueryRun } from './log-dialect.js';
import type { LogDatabase } from './log-schema.js';
import type { RuleCache } from './rule-cache.js';
import { RuleRefusal } from './rule-refusal.js';
import type { BatchResult, Committer, StagedWrite } from './staged-write.js';

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
 * Returns undefined, having stored nothing, when the write needs the full transaction:
 * something it names is not cached, a rule refuses it (a refusal is only trusted
 * inside the transaction that read the state), it changes other tables, or the insert
 * failed on a constraint or a busy log (another connection wrote first; the cache goes).
 * Any other failure may have happened at the implicit commit: `committing`.
 */
export function commitLoneInsert(
  db: Kysely<LogDatabase>,
  cache: RuleCache,
  direct: SyncQueryRun,
  staged: StagedWrite,
  committer: Committer,
): BatchResult | undefined {
  if (staged.result !== undefined || !ruleStateCached(cache, staged)) return undefined;
  let effects: RuleEffects;
  try {
    effects = checkWrite(staged, cache);
  } catch (error) {
    if (error instanceof RuleRefusal) return undefined;
    throw error;
  }
  if (!changesNothing(effects)) return undefined;
  const started = performance.now();
  const accepted = acceptWrite(cache, staged, effects);
  try {
    direct(eventInsert(db, accepted.row));
  } catch (cause) {
    cache.reset();
    if (storedNothing(cause)) return undefined;
    return { kind: 'failed', committing: true, cause, outcomes: [] };
  }
  const { sequence, event_id: eventId, digest } = accepted.row;
  return {
    kind: 'committed',
    outcomes: [{ stored: { sequence, eventId, digest } }],
    committer,
    elapsedMs: performance.now() - started,
    waitedMs: 0,
  };
}

/**
 * SQLite refused the statement before writing: a constraint (another connection took
 * the sequence) or the write lock (`SQLITE_BUSY`, `SQLITE_BUSY_SNAPSHOT`).
 */
function storedNothing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_CONSTRAINT') || code.startsWith('SQLITE_BUSY'));
}
