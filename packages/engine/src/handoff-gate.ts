import type { HandoffIntent, HandoffPause } from '@factum/agent-facts';
import { RunError } from './run-error.js';

type Decision = { readonly kind: 'release' } | { readonly kind: 'commit'; readonly settle: Settle };
type Settle = { resolve: (pause: HandoffPause) => void; reject: (error: unknown) => void };

/**
 * Moves a running turn to a successor at a safe point. `reserve(intent)` asks for one;
 * `ready()` resolves only when the run stands where nothing is in flight — the step's
 * tools settled, no model request out — and the run waits there until the held
 * handoff is released (the run goes on) or committed (the run is sealed as
 * `handoff_paused`).
 *
 * @example
 * const reservation = running.handoff.reserve(intent);
 * using held = await reservation.ready();
 * const pause = await held.commit().wait();
 */
export class HandoffGate {
  #pending: HandoffReservation | undefined;
  #ended: (() => RunError) | undefined;

  /** Whether a handoff is reserved: the run's next safe point will wait for its decision. */
  get reserved(): boolean {
    return this.#pending !== undefined;
  }

  /** Asks the run to stop at its next safe point for `intent`. */
  reserve(intent: HandoffIntent): HandoffReservation {
    if (this.#ended) throw this.#ended();
    if (this.#pending) {
      throw new RunError(
        'handoff_unavailable',
        `handoff ${this.#pending.intent.handoffId} is already reserved`,
      );
    }
    const reservation = new HandoffReservation(intent, () => {
      if (this.#pending === reservation) this.#pending = undefined;
    });
    this.#pending = reservation;
    return reservation;
  }

  /**
   * The run's side: at a safe point, hand a pending reservation its held handoff and
   * wait for the decision. Returns the pause to seal with, or undefined to go on.
   */
  async atSafePoint(
    preview: (intent: HandoffIntent) => HandoffPause,
    signal: AbortSignal,
  ): Promise<Sealing | undefined> {
    const reservation = this.#pending;
    if (reservation === undefined || signal.aborted) return undefined;
    const pause = preview(reservation.intent);
    const decision = await reservation.hold(pause, signal);
    this.#pending = undefined;
    return decision.kind === 'commit' ? { pause, settle: decision.settle } : undefined;
  }

  /**
   * The run ended: pending and later reservations fail with the error `reason` makes —
   * made only for a reservation, as every run closes its gate and few are handed off.
   */
  close(reason: () => RunError): void {
    this.#ended = reason;
    this.#pending?.fail(reason());
    this.#pending = undefined;
  }
}

/** A commit the run must perform: seal with `pause`, then settle the caller's wait. */
export type Sealing = { readonly pause: HandoffPause; readonly settle: Settle };

/** A reserved handoff, waiting for the run's next safe point. */
export class HandoffReservation {
  readonly intent: HandoffIntent;
  readonly #forget: () => void;
  readonly #ready: Promise<HeldHandoff>;
  #resolve!: (held: HeldHandoff) => void;
  #reject!: (error: unknown) => void;

  constructor(intent: HandoffIntent, forget: () => void) {
    this.intent = intent;
    this.#forget = forget;
    this.#ready = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // A reservation nobody awaits must not surface as an unhandled rejection.
    this.#ready.catch(() => undefined);
  }

  /** Resolves at the run's next safe point with the held handoff. */
  ready(): Promise<HeldHandoff> {
    return this.#ready;
  }

  hold(pause: HandoffPause, signal: AbortSignal): Promise<Decision> {
    return new Promise<Decision>((decide) => {
      // Cancelling the run while it is held releases it, so it can end cancelled.
      const onAbort = () => held.release();
      const held = new HeldHandoff(pause, (decision) => {
        signal.removeEventListener('abort', onAbort);
        this.#forget();
        decide(decision);
      });
      signal.addEventListener('abort', onAbort, { once: true });
      this.#resolve(held);
    });
  }

  fail(reason: RunError): void {
    this.#reject(reason);
  }
}

/** The run, stopped at a safe point. Disposing it releases the run. */
export class HeldHandoff implements Disposable {
  readonly #pause: HandoffPause;
  readonly #decide: (decision: Decision) => void;
  #decided = false;

  constructor(pause: HandoffPause, decide: (decision: Decision) => void) {
    this.#pause = pause;
    this.#decide = decide;
  }

  /** The pause a commit would seal: its receipt will equal this. */
  preview(): HandoffPause {
    return this.#pause;
  }

  /** Lets the run go on; the reservation is gone. */
  release(): void {
    if (this.#decided) return;
    this.#decided = true;
    this.#decide({ kind: 'release' });
  }

  /** Seals the invocation as `handoff_paused`; `wait()` resolves once that is durable. */
  commit(): { wait(): Promise<HandoffPause> } {
    if (this.#decided)
      throw new RunError('handoff_unavailable', 'this handoff was already released or committed');
    this.#decided = true;
    const done = new Promise<HandoffPause>((resolve, reject) =>
      this.#decide({ kind: 'commit', settle: { resolve, reject } }),
    );
    return { wait: () => done };
  }

  [Symbol.dispose](): void {
    this.release();
  }
}
