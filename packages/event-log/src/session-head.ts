import type { Kysely } from 'kysely';
import { EMPTY_DIGEST } from './log-prefix.js';
import type { LogDatabase } from './log-schema.js';

/** Where a session's chain stands: its last event's sequence (0: none) and session digest. */
export type SessionHead = { readonly highWater: number; readonly digest: string };

/**
 * A session's head, read from one index entry and one row: what a reader that keeps the
 * session's history in memory compares with to know whether it is still the whole of it.
 */
export async function sessionHead(db: Kysely<LogDatabase>, sessionId: string): Promise<SessionHead> {
  const row = await db
    .selectFrom('events')
    .select(['sequence', 'session_digest'])
    .where('session_id', '=', sessionId)
    .orderBy('sequence', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row === undefined
    ? { highWater: 0, digest: EMPTY_DIGEST }
    : { highWater: Number(row.sequence), digest: row.session_digest };
}
