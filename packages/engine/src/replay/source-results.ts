import { factNeedsResult } from '@factum/agent-facts';
import type { EventLog, StoredEvent } from '@factum/event-log';

/**
 * Recorded tool results, read from the source once each: every later step's prompt of
 * a session carries them again, and a read per prompt would make a replay quadratic in
 * queries. A session's results are read together before it is replayed (`prefetch`);
 * one the history does not name is read alone when asked for.
 */
export class SourceResults {
  readonly #source: EventLog;
  readonly #read = new Map<string, Promise<unknown>>();

  constructor(source: EventLog) {
    this.#source = source;
  }

  /** The recorded result of the event `eventId` of `sessionId`, as JSON. */
  read(sessionId: string, eventId: string): Promise<unknown> {
    const key = keyOf(sessionId, eventId);
    let result = this.#read.get(key);
    if (result === undefined) {
      result = this.#source.resolveToolResult(sessionId, eventId).then((stored) => stored.json());
      this.#read.set(key, result);
    }
    return result;
  }

  /** Reads together the results the events of `history` settled, each under its own session. */
  async prefetch(history: readonly StoredEvent[]): Promise<void> {
    const bySession = new Map<string, string[]>();
    for (const { event } of history) {
      const { sessionId } = event.invocation;
      if (!factNeedsResult(event.fact) || this.#read.has(keyOf(sessionId, event.id))) continue;
      const ids = bySession.get(sessionId) ?? [];
      if (ids.length === 0) bySession.set(sessionId, ids);
      ids.push(event.id);
    }
    for (const [sessionId, ids] of bySession) {
      for (const [eventId, stored] of await this.#source.resolveToolResults(sessionId, ids)) {
        this.#read.set(keyOf(sessionId, eventId), Promise.resolve(stored.json()));
      }
    }
  }
}

function keyOf(sessionId: string, eventId: string): string {
  return `${sessionId}\u0000${eventId}`;
}
