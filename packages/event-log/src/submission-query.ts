import type { Invocation } from '@factum/agent-facts';
import type { Kysely } from 'kysely';
import { EventLogError } from './event-log-error.js';
import type { ReadBounds } from './log-queries.js';
import type { LogDatabase } from './log-schema.js';
import { decodeRow, type StoredEvent } from './stored-event.js';

/**
 * The invocation a submitter's key opened in a session, and its events so far, in
 * order: its `invocation_opened` first, its `invocation_ended` last once it has ended.
 */
export type Submission = {
  readonly invocation: Invocation;
  readonly events: readonly StoredEvent[];
  /** Whether the invocation has ended (its last event is `invocation_ended`). */
  readonly ended: boolean;
};

/**
 * Reads the invocation that `key` opened in `sessionId`, with its events, in one
 * statement (the invocation row joined to its events); `undefined` when no opening
 * took the key. Fails `bounds_exceeded` rather than cut the invocation's history.
 */
export async function readSubmission(
  db: Kysely<LogDatabase>,
  target: { readonly sessionId: string; readonly key: string },
  bounds: ReadBounds,
): Promise<Submission | undefined> {
  const rows = await db
    .selectFrom('invocations as i')
    .innerJoin('events as e', (join) =>
      join.onRef('e.session_id', '=', 'i.session_id').onRef('e.invocation_id', '=', 'i.invocation_id'),
    )
    .select([
      'e.sequence',
      'e.body',
      'e.bytes',
      'i.turn_id',
      'i.run_id',
      'i.invocation_id',
      'i.ended_sequence',
    ])
    .where('i.session_id', '=', target.sessionId)
    .where('i.idempotency_key', '=', target.key)
    .orderBy('e.sequence', 'asc')
    .limit(bounds.maxEvents + 1)
    .execute();
  const first = rows[0];
  if (first === undefined) return undefined;
  if (rows.length > bounds.maxEvents) {
    throw new EventLogError(
      'bounds_exceeded',
      `invocation ${first.invocation_id} holds more than ${bounds.maxEvents} events: raise maxEvents or page with read()`,
    );
  }
  let bytes = 0;
  const events: StoredEvent[] = [];
  for (const row of rows) {
    bytes += Number(row.bytes);
    if (bytes > bounds.maxBytes) {
      throw new EventLogError(
        'bounds_exceeded',
        `invocation ${first.invocation_id} holds more than ${bounds.maxBytes} bytes: raise maxBytes or page with read()`,
      );
    }
    events.push(decodeRow(row));
  }
  const endedAt = first.ended_sequence === null ? undefined : Number(first.ended_sequence);
  return {
    invocation: {
      sessionId: target.sessionId,
      turnId: first.turn_id,
      runId: first.run_id,
      invocationId: first.invocation_id,
    },
    events,
    // Read in the same statement as the events: ended exactly when its end is among them.
    ended: endedAt !== undefined && events.at(-1)?.sequence === endedAt,
  };
}
