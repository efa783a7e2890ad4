import type { Invocation } from '@factum/agent-facts';
import type { Kysely } from 'kysely';
import { EventLogError } from './event-log-error.js';
import type { ReadBounds } from './log-queries.js';
import type { LogDatabase } from './log-schema.js';
import { decodeRow, type StoredEvent } from './stored-event.js';

/**
 * The invocation a submitter's key opened in a session, and its events so far, in
 * order: its `invocation_opened` first, then the rest, its `invocation_ended` included
 * once it has ended (reconciliation facts may follow it).
 */
export type Submission = {
  readonly invocation: Invocation;
  readonly events: readonly StoredEvent[];
  /** Whether the invocation has ended (its last event is `invocation_ended`). */
  readonly ended: boolean;
};

/**
 * Reads the invocation that `key` opened in `sessionId`, with its events, in one
 * statement; `undefined` when no opening
 * took the key. Fails `bounds_exceeded` rather than cut the invocation's history.
 */
export async function readSubmission(
  db: Kysely<LogDatabase>,
  target: { readonly sessionId: string; readonly key: string },
  bounds: ReadBounds,
): Promise<Submission | undefined> {
  // The events of the invocation the key names, through the same index as
  // `invocationEvents`: the key is looked up in a subquery of one row.
  const rows = await db
    .selectFrom('events')
    .select(['sequence', 'body', 'bytes'])
    .where('session_id', '=', target.sessionId)
    .where('invocation_id', '=', (eb) =>
      eb
        .selectFrom('invocations')
        .select('invocation_id')
        .where('session_id', '=', target.sessionId)
        .where('idempotency_key', '=', target.key),
    )
    .orderBy('sequence', 'asc')
    .limit(bounds.maxEvents + 1)
    .execute();
  if (rows.length === 0) return undefined;
  const what = `the invocation of idempotency key ${JSON.stringify(target.key)}`;
  if (rows.length > bounds.maxEvents) {
    throw new EventLogError(
      'bounds_exceeded',
      `${what} holds more than ${bounds.maxEvents} events: raise maxEvents or page with read()`,
    );
  }
  let bytes = 0;
  const events: StoredEvent[] = [];
  for (const row of rows) {
    bytes += Number(row.bytes);
    if (bytes > bounds.maxBytes) {
      throw new EventLogError(
        'bounds_exceeded',
        `${what} holds more than ${bounds.maxBytes} bytes: raise maxBytes or page with read()`,
      );
    }
    events.push(decodeRow(row));
  }
  const first = events[0]!.event;
  return {
    invocation: first.invocation,
    events,
    // Reconciliation facts may follow an end: look for it, not at the last event.
    ended: events.some((stored) => stored.event.fact.kind === 'invocation_ended'),
  };
}
