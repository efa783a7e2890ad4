import { setImmediate } from 'node:timers/promises';
import type { Invocation } from '@factum/agent-facts';
import type { Kysely } from 'kysely';
import { EventLogError } from './event-log-error.js';
import { EMPTY_DIGEST } from './log-prefix.js';
import type { LogDatabase } from './log-schema.js';
import { decodeRow, type StoredEvent } from './stored-event.js';

/** How much history a read may return: past either bound it fails instead of cutting. */
export type ReadBounds = { readonly maxEvents: number; readonly maxBytes: number };

type Filter = { sessionId?: string; invocationId?: string; upTo?: number };

/** A bounded read's events, the digests its last row carries and its size. */
export type BoundedRead = { events: StoredEvent[]; digest: string; sessionDigest: string; bytes: number };

/** An events row as a bounded read selects it. */
export type EventRow = {
  sequence: number;
  body: string;
  bytes: number;
  digest: string;
  session_digest: string;
};

/** Reads a whole filtered history within the bounds, or throws `bounds_exceeded`. */
export async function readBounded(
  db: Kysely<LogDatabase>,
  filter: Filter,
  bounds: ReadBounds,
): Promise<BoundedRead> {
  let query = db
    .selectFrom('events')
    .select(['sequence', 'body', 'bytes', 'digest', 'session_digest'])
    .orderBy('sequence', 'asc')
    .limit(bounds.maxEvents + 1);
  if (filter.sessionId !== undefined) query = query.where('session_id', '=', filter.sessionId);
  if (filter.invocationId !== undefined) query = query.where('invocation_id', '=', filter.invocationId);
  if (filter.upTo !== undefined) query = query.where('sequence', '<=', filter.upTo);
  return boundedRows(await query.execute(), describeFilter(filter), bounds);
}

/**
 * The events of `rows` (read in sequence order, at most `maxEvents + 1`), or
 * `bounds_exceeded` naming `what` when they pass either bound.
 */
export function boundedRows(rows: readonly EventRow[], what: string, bounds: ReadBounds): BoundedRead {
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
  const last = rows.at(-1);
  return {
    events,
    digest: last?.digest ?? EMPTY_DIGEST,
    sessionDigest: last?.session_digest ?? EMPTY_DIGEST,
    bytes,
  };
}

function describeFilter(filter: Filter): string {
  if (filter.invocationId !== undefined) return `invocation ${filter.invocationId}`;
  if (filter.sessionId !== undefined) return `session ${filter.sessionId}`;
  return 'the log';
}

/** A page of events after a sequence, for viewers that follow the log. */
export async function readPage(
  db: Kysely<LogDatabase>,
  options: { afterSequence: number; limit: number; sessionId?: string },
): Promise<StoredEvent[]> {
  let query = db
    .selectFrom('events')
    .select(['sequence', 'body'])
    .where('sequence', '>', options.afterSequence)
    .orderBy('sequence', 'asc')
    .limit(options.limit);
  if (options.sessionId !== undefined) query = query.where('session_id', '=', options.sessionId);
  return (await query.execute()).map(decodeRow);
}

/** The sessions whose operations include `operationId`, in name order. */
export async function operationSessions(db: Kysely<LogDatabase>, operationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('operations')
    .select('session_id')
    .where('operation_id', '=', operationId)
    .orderBy('session_id')
    .execute();
  return rows.map((row) => row.session_id);
}

/** Invocations with no `invocation_ended`, oldest first. */
export async function unfinished(db: Kysely<LogDatabase>, limit: number): Promise<Invocation[]> {
  const rows = await db
    .selectFrom('invocations')
    .select(['session_id', 'turn_id', 'run_id', 'invocation_id'])
    // Live exactly until its end: read through the index that keeps one live per session.
    .where('live', '=', 1)
    .orderBy('opened_sequence', 'asc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    sessionId: row.session_id,
    turnId: row.turn_id,
    runId: row.run_id,
    invocationId: row.invocation_id,
  }));
}

/** The last event of a run (optionally at or before a sequence) and the run's invocations. */
export async function runEnd(
  db: Kysely<LogDatabase>,
  options: { sessionId: string; runId: string; upTo?: number },
): Promise<{ sequence: number; digest: string; invocationId: string } | undefined> {
  let query = db
    .selectFrom('events')
    .select(['sequence', 'session_digest', 'invocation_id'])
    .where('session_id', '=', options.sessionId)
    .where('invocation_id', 'in', (eb) =>
      eb
        .selectFrom('invocations')
        .select('invocation_id')
        .where('session_id', '=', options.sessionId)
        .where('run_id', '=', options.runId),
    )
    .orderBy('sequence', 'desc')
    .limit(1);
  if (options.upTo !== undefined) query = query.where('sequence', '<=', options.upTo);
  const row = await query.executeTakeFirst();
  return (
    row && { sequence: Number(row.sequence), digest: row.session_digest, invocationId: row.invocation_id }
  );
}

/**
 * Every row in order, for checking the chain; reads in pages to bound memory. On SQLite a
 * read settles without waiting on any I/O, so between pages it lets the event loop run:
 * a long check must not hold up a server's requests, or the process's other work.
 */
export async function* allRows(db: Kysely<LogDatabase>): AsyncGenerator<{
  sequence: number;
  body: string;
  digest: string;
  session_id: string;
  session_digest: string;
}> {
  let after = 0;
  for (;;) {
    const rows = await db
      .selectFrom('events')
      .select(['sequence', 'body', 'digest', 'session_id', 'session_digest'])
      .where('sequence', '>', after)
      .orderBy('sequence', 'asc')
      .limit(2048)
      .execute();
    if (rows.length === 0) return;
    for (const row of rows) yield { ...row, sequence: Number(row.sequence) };
    after = Number(rows.at(-1)!.sequence);
    await setImmediate();
  }
}
