import type { CommitReceipt, EventSink, EventWrite, RuntimeEvent, ToolResult } from '@factum/agent-facts';
import type { SessionEvent } from '../context-projection.js';

/**
 * The log a replay writes to: facts kept in memory, in order, and nothing else — no
 * chain digests, no SQLite, no writer thread. A commit resolves at once, so the tools
 * layer runs exactly as it does over a real log but never waits; a deferred write keeps
 * its place before the next commit, as a real log would order it.
 */
export class ScratchSink implements EventSink {
  readonly events: SessionEvent[] = [];
  readonly #results = new Map<string, ToolResult>();
  #sequence: number;
  readonly #clock: () => number;

  constructor(firstSequence: number, clock: () => number) {
    this.#sequence = firstSequence - 1;
    this.#clock = clock;
  }

  /** Records `event` (a fact the replay writes itself: its model steps and end). */
  push(event: RuntimeEvent): number {
    this.#sequence += 1;
    this.events.push({ sequence: this.#sequence, event });
    return this.#sequence;
  }

  commit(write: EventWrite): Promise<CommitReceipt> {
    const sequence = this.#record(write);
    return Promise.resolve({ sequence, eventId: write.event.id, digest: '' });
  }

  defer(write: EventWrite): void {
    this.#record(write);
  }

  /** The store's clock, as the replay fixes it (an approval's deadline is counted from it). */
  databaseNow(): Promise<number> {
    return Promise.resolve(this.#clock());
  }

  /** A tool result this replay recorded, by the id of the event that settled it. */
  result(eventId: string): ToolResult | undefined {
    return this.#results.get(eventId);
  }

  #record(write: EventWrite): number {
    if (write.result !== undefined) this.#results.set(write.event.id, write.result);
    return this.push(write.event);
  }
}
