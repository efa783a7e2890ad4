import type { Clock, TimerHandle } from './clock.js';

/** Reason a deadline's signal carries, so that callers can tell it from other aborts. */
export class DeadlineElapsed extends Error {
  constructor() {
    super('the operation deadline elapsed');
  }
}

/**
 * An absolute instant by which an operation must be done, with a signal that aborts
 * at that instant or when `parent` aborts (whichever is first). `dispose` releases
 * the timer; every owner disposes its deadline in `finally`.
 */
export class Deadline implements Disposable {
  readonly at: number;
  readonly #clock: Clock;
  readonly #controller = new AbortController();
  readonly #timer: TimerHandle;
  readonly #parent: AbortSignal | undefined;
  readonly #onParentAbort = () => this.#controller.abort(this.#parent?.reason);

  private constructor(clock: Clock, at: number, parent: AbortSignal | undefined) {
    this.#clock = clock;
    this.at = at;
    this.#parent = parent;
    this.#timer = clock.setTimer(at - clock.now(), () => this.#controller.abort(new DeadlineElapsed()));
    if (parent?.aborted) this.#onParentAbort();
    else parent?.addEventListener('abort', this.#onParentAbort, { once: true });
  }

  /** A deadline `ms` from now. */
  static after(clock: Clock, ms: number, parent?: AbortSignal): Deadline {
    return new Deadline(clock, clock.now() + ms, parent);
  }

  /** A deadline at the instant `at` (on `clock`'s scale). */
  static at(clock: Clock, at: number, parent?: AbortSignal): Deadline {
    return new Deadline(clock, at, parent);
  }

  /** Aborts at the deadline or with the parent. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Milliseconds left, never negative. */
  remaining(): number {
    return Math.max(0, this.at - this.#clock.now());
  }

  /** True once the instant has passed (even if the timer has not fired yet). */
  expired(): boolean {
    return this.#clock.now() >= this.at || this.#controller.signal.reason instanceof DeadlineElapsed;
  }

  /** True when the signal aborted because of the parent rather than the deadline. */
  cancelledByParent(): boolean {
    return this.#controller.signal.aborted && !(this.#controller.signal.reason instanceof DeadlineElapsed);
  }

  [Symbol.dispose](): void {
    this.#timer.cancel();
    this.#parent?.removeEventListener('abort', this.#onParentAbort);
  }
}
