import type { Clock, TimerHandle } from '../../src/index.js';

/** The process clock, counting the timers it hands out that are still pending. */
export class TrackingClock implements Clock {
  readonly #pending = new Set<TimerHandle>();
  #created = 0;

  now(): number {
    return performance.now();
  }

  setTimer(ms: number, callback: () => void): TimerHandle {
    this.#created += 1;
    const handle: TimerHandle = {
      cancel: () => {
        clearTimeout(timer);
        this.#pending.delete(handle);
      },
    };
    const timer = setTimeout(
      () => {
        this.#pending.delete(handle);
        callback();
      },
      Math.max(0, ms),
    );
    this.#pending.add(handle);
    return handle;
  }

  /** Timers created and neither fired nor cancelled. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Timers created so far. */
  get created(): number {
    return this.#created;
  }
}
