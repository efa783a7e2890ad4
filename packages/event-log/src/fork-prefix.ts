import type { FactOf, LogScope } from '@factum/agent-facts';
import type { Kysely } from 'kysely';
import { EventLogError } from './event-log-error.js';
import { LogPrefix } from './log-prefix.js';
import { type BoundedRead, type ReadBounds, readBounded } from './log-queries.js';
import type { LogDatabase } from './log-schema.js';
import type { StoredEvent } from './stored-event.js';

/**
 * The whole log, or one session, as a digested prefix. A forked session's history is
 * its source's prefix up to the fork's boundary (recursively), then its own events; its
 * digest and high water are its own chain's, whose first link vouches for the source's.
 */
export async function prefixOf(
  db: Kysely<LogDatabase>,
  scope: LogScope,
  bounds: ReadBounds,
  readOwn: OwnReader = (sessionId, own) => readBounded(db, { sessionId }, own),
): Promise<LogPrefix> {
  if (scope.kind === 'global') {
    const { events, digest } = await readBounded(db, {}, bounds);
    return new LogPrefix({ events, digest, highWater: events.at(-1)?.sequence ?? 0, scope });
  }
  const own = await readOwn(scope.id, bounds);
  const inherited = await inheritedEvents(db, own, bounds);
  const events = inherited.length === 0 ? own.events : [...inherited, ...own.events];
  return new LogPrefix({
    events,
    digest: own.sessionDigest,
    highWater: own.events.at(-1)?.sequence ?? 0,
    scope,
  });
}

/** Reads a session's own events within bounds (`readBounded`, or several together). */
export type OwnReader = (sessionId: string, bounds: ReadBounds) => Promise<BoundedRead>;

/** A session's own events as read, with their size. */
type OwnRead = { readonly events: readonly StoredEvent[]; readonly bytes: number };

/** The `session_forked` a session starts with, if it is a fork. */
export function forkOf(events: readonly StoredEvent[]): FactOf<'session_forked'> | undefined {
  const fact = events[0]?.event.fact;
  return fact?.kind === 'session_forked' ? fact : undefined;
}

/**
 * The events a forked session inherits: its source's prefix up to the boundary, itself
 * read the same way (a fork of a fork). Empty for a session that is not a fork. Every
 * prefix read is checked against the digest its fork recorded; the bounds hold for the
 * whole history, inherited events included.
 */
export async function inheritedEvents(
  db: Kysely<LogDatabase>,
  own: OwnRead,
  bounds: ReadBounds,
): Promise<StoredEvent[]> {
  const chunks: (readonly StoredEvent[])[] = [];
  let events = own.events.length;
  let bytes = own.bytes;
  let fork = forkOf(own.events);
  while (fork !== undefined) {
    const { sessionId } = fork.source.invocation;
    const remaining = { maxEvents: bounds.maxEvents - events, maxBytes: bounds.maxBytes - bytes };
    if (remaining.maxEvents < 0 || remaining.maxBytes < 0) throw tooLarge(bounds);
    const prefix = await readBounded(db, { sessionId, upTo: fork.source.highWater }, remaining).catch(
      (error: unknown) => {
        throw EventLogError.isInstance(error) && error.code === 'bounds_exceeded' ? tooLarge(bounds) : error;
      },
    );
    const last = prefix.events.at(-1);
    if (last?.sequence !== fork.source.highWater || prefix.sessionDigest !== fork.source.digest) {
      throw new EventLogError(
        'corrupt_row',
        `session ${sessionId} does not hold the prefix a fork of it recorded (sequence ${fork.source.highWater}, digest ${fork.source.digest})`,
      );
    }
    chunks.push(prefix.events);
    events += prefix.events.length;
    bytes += prefix.bytes;
    fork = forkOf(prefix.events);
  }
  return chunks.reverse().flat();
}

function tooLarge(bounds: ReadBounds): EventLogError {
  return new EventLogError(
    'bounds_exceeded',
    `the forked session's history, with the prefixes it inherits, holds more than ${bounds.maxEvents} events or ${bounds.maxBytes} bytes: raise the bounds`,
  );
}
