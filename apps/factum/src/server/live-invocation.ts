import type { HandoffIntent, HandoffPause, Invocation } from '@factum/agent-facts';
import type { HeldHandoff, RunningInvocation } from '@factum/engine';
import { ServerError } from './server-error.js';

/** How long a handoff may take to reach a safe point, and how long a client may hold it. */
export type HandoffTimeouts = { readonly readyMs: number; readonly holdMs: number };

/**
 * A run this server started, with the handoff it holds for a client between the
 * reserve and the commit (or release) requests. A hold is a lease: a client that
 * vanishes cannot pin the run at its safe point forever.
 */
export class LiveInvocation {
  readonly running: RunningInvocation;
  /** Settles when the run has ended and its effects are durable; never rejects. */
  readonly ended: Promise<void>;
  #held: { readonly handoff: HeldHandoff; readonly lease: NodeJS.Timeout } | undefined;

  constructor(running: RunningInvocation) {
    this.running = running;
    this.ended = running.wait().then(
      () => undefined,
      () => undefined,
    );
  }

  get invocation(): Invocation {
    return this.running.invocation;
  }

  /** Whether a client holds this run at a safe point. */
  get holding(): boolean {
    return this.#held !== undefined;
  }

  /**
   * Reserves a handoff and waits for the run's next safe point, then holds it there
   * for at most `holdMs`. If no safe point comes within `readyMs` (or `signal` aborts)
   * the reservation is withdrawn: released the moment it is reached.
   */
  async reserveHandoff(
    intent: HandoffIntent,
    options: HandoffTimeouts & { readonly signal?: AbortSignal },
  ): Promise<HandoffPause> {
    const reservation = this.running.handoff.reserve(intent);
    const ready = reservation.ready();
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const gaveUp = new Promise<'gave_up'>((resolve) => {
      timer = setTimeout(() => resolve('gave_up'), options.readyMs);
      onAbort = () => resolve('gave_up');
      options.signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const first = await Promise.race([ready, gaveUp]);
      if (first === 'gave_up') {
        ready.then(
          (held) => held.release(),
          () => undefined,
        );
        throw new ServerError(
          'handoff_timeout',
          `the run reached no safe point within ${options.readyMs} ms; the reservation was withdrawn`,
        );
      }
      const lease = setTimeout(() => this.releaseHandoff(), options.holdMs);
      lease.unref();
      this.#held = { handoff: first, lease };
      return first.preview();
    } finally {
      clearTimeout(timer);
      if (onAbort) options.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Seals the run as `handoff_paused`; resolves with the pause once it is durable. */
  commitHandoff(): Promise<HandoffPause> {
    return this.#take().commit().wait();
  }

  /** Lets a held run go on. */
  releaseHandoff(): void {
    if (this.#held === undefined) return;
    this.#take().release();
  }

  /** Cancels the run; a held handoff is released so the run can end cancelled. */
  cancel(): void {
    this.running.cancel();
    this.releaseHandoff();
  }

  #take(): HeldHandoff {
    const held = this.#held;
    if (held === undefined) {
      throw new ServerError(
        'no_held_handoff',
        `invocation ${this.invocation.invocationId} holds no handoff: reserve one first with POST …/handoff`,
      );
    }
    clearTimeout(held.lease);
    this.#held = undefined;
    return held.handoff;
  }
}
