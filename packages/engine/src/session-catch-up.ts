import { canonicalJson } from '@factum/agent-facts';
import { chainLink, contentDigest } from '@factum/agent-facts/digest';
import type { EventLog, SessionHead } from '@factum/event-log';
import type { SessionEvent } from './context-projection.js';
import type { ContextBounds } from './model-turn.js';

/** The most events a history in memory takes from the log to catch up; more is read whole. */
export const CATCH_UP_MAX = 1000;

/** Where a history in memory ends, and how much of the bounds it fills. */
export type HistoryEnd = {
  readonly highWater: number;
  /** The session chain's last link (undefined for an empty session). */
  readonly link: string | undefined;
  readonly events: number;
  readonly bytes: number;
};

/** The events that bring a history in memory up to the log's head. */
export type CatchUp = {
  readonly events: readonly SessionEvent[];
  readonly link: string;
  readonly bytes: number;
};

/**
 * The session's events after the history in memory (`from`) up to the log's `head`, if
 * the history is a prefix of the session as the log holds it: the new events, chained
 * onto the history's last link the way the log chains them, must end at the head's
 * sequence with the head's digest. Otherwise — the history missed a fact in between (an
 * own commit advanced it past another writer's), more than `CATCH_UP_MAX` events came,
 * or the whole would not fit `bounds` — `undefined`, and the caller reads the session
 * whole (which fails `bounds_exceeded` as the log does). Events are decoded as the log's
 * reads decode them, so a history caught up equals `scopedPrefix` event for event.
 */
export async function catchUp(
  log: EventLog,
  sessionId: string,
  from: HistoryEnd,
  head: SessionHead,
  bounds: ContextBounds,
): Promise<CatchUp | undefined> {
  if (head.highWater <= from.highWater || from.link === undefined) return undefined;
  const page = await log.read({
    afterSequence: from.highWater,
    limit: CATCH_UP_MAX,
    scope: { session: sessionId },
  });
  const events: SessionEvent[] = [];
  let link = from.link;
  let bytes = 0;
  for (const stored of page) {
    if (stored.sequence > head.highWater) break;
    const body = canonicalJson(stored.event);
    bytes += Buffer.byteLength(body);
    link = chainLink(link, contentDigest(body));
    events.push(stored);
  }
  if (events.at(-1)?.sequence !== head.highWater || link !== head.digest) return undefined;
  if (from.events + events.length > bounds.maxEvents || from.bytes + bytes > bounds.maxBytes)
    return undefined;
  return { events, link, bytes };
}
