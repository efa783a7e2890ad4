import type { Invocation } from '@factum/agent-facts';
import type { HandoffGate } from './handoff-gate.js';
import type { RunOutcome } from './run-input.js';

/** A run in progress: its handoff gate, a way to cancel it, and its end. */
export class RunningInvocation {
  readonly invocation: Invocation;
  readonly handoff: HandoffGate;
  /**
   * True when this start answered a repeated submission (the same idempotency key) with
   * the run the first one started: `wait()` gives that run's end, `cancel()` does nothing
   * and its handoff gate is closed — the first submitter steers the run.
   */
  readonly resubmitted: boolean;
  /**
   * The recorded end, when this start answered a repeated submission of a run that had
   * already ended (`wait()` resolves to it at once); `undefined` otherwise.
   */
  readonly recorded: RunOutcome | undefined;
  readonly #done: Promise<RunOutcome>;
  readonly #cancel: () => void;

  constructor(init: {
    invocation: Invocation;
    handoff: HandoffGate;
    done: Promise<RunOutcome>;
    cancel: () => void;
    resubmitted?: boolean;
    recorded?: RunOutcome;
  }) {
    this.invocation = init.invocation;
    this.resubmitted = init.resubmitted ?? false;
    this.recorded = init.recorded;
    this.handoff = init.handoff;
    this.#done = init.done;
    this.#cancel = init.cancel;
  }

  /** Resolves when the invocation has ended and every effect it started is durable. */
  wait(): Promise<RunOutcome> {
    return this.#done;
  }

  /** Cancels the run: in-flight effects finish, the rest is rejected, it ends cancelled. */
  cancel(): void {
    this.#cancel();
  }
}
