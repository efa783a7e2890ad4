import type { EventLog } from '@factum/event-log';
import type { SessionIndex } from './session-index.js';

type Waiter = { readonly after: number; readonly wake: () => void };

/**
 * Follows the log's tail: one reader per server, however many live streams listen.
 * It polls only while someone waits, feeds each new event to the session index once,
 * and wakes the streams whose cursor it passed. Polling (not an in-process hook)
 * also sees facts written by other processes sharing the log.
 */
export class LogFollower {
  readonly #log: EventLog;
  readonly #index: SessionIndex;
  readonly #intervalMs: number;
  readonly #waiters = new Set<Waiter>();
  #highWater = 0;
  #reading: Promise<number> = Promise.resolve(0);
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(init: { log: EventLog; index: SessionIndex; intervalMs?: number }) {
    this.#log = init.log;
    this.#index = init.index;
    this.#intervalMs = init.intervalMs ?? 150;
  }

  /** The last sequence the index has seen. */
  get highWater(): number {
    return this.#highWater;
  }

  /** Reads every event written since the last call into the index; resolves with the high water. */
  catchUp(): Promise<number> {
    // Chained so that reads never overlap and each caller sees the log as of its call.
    this.#reading = this.#reading.then(
      () => this.#read(),
      () => this.#read(),
    );
    return this.#reading;
  }

  /** Resolves once the log holds an event past `after`, or when `signal` aborts. */
  waitPast(after: number, signal: AbortSignal): Promise<void> {
    if (this.#highWater > after || signal.aborted || this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter: Waiter = {
        after,
        wake: () => {
          this.#waiters.delete(waiter);
          signal.removeEventListener('abort', waiter.wake);
          resolve();
        },
      };
      this.#waiters.add(waiter);
      signal.addEventListener('abort', waiter.wake, { once: true });
      this.#schedule();
    });
  }

  /** Stops polling and wakes every waiter. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    for (const waiter of [...this.#waiters]) waiter.wake();
  }

  async #read(): Promise<number> {
    for (;;) {
      const page = await this.#log.read({ afterSequence: this.#highWater, limit: 1000 });
      for (const stored of page) this.#index.apply(stored);
      const last = page.at(-1);
      if (last !== undefined) this.#highWater = last.sequence;
      if (page.length < 1000) return this.#highWater;
    }
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#closed) return;
    this.#timer = setTimeout(() => void this.#tick(), this.#intervalMs);
  }

  async #tick(): Promise<void> {
    try {
      await this.catchUp();
    } catch {
      // A failed read wakes everyone: each stream reads the log itself and meets the error.
      for (const waiter of [...this.#waiters]) waiter.wake();
    }
    for (const waiter of [...this.#waiters]) if (this.#highWater > waiter.after) waiter.wake();
    this.#timer = undefined;
    if (this.#waiters.size > 0) this.#schedule();
  }
}
