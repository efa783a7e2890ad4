import type { Invocation } from '@factum/agent-facts';
import type { RunningInvocation } from '@factum/engine';
import { LiveInvocation } from './live-invocation.js';

/** Told when a run this server started has ended (e.g. to export its trace). */
export type InvocationEndedHook = (invocation: Invocation) => Promise<void>;

/** The runs this server started and that have not ended yet, by invocation id. */
export class InvocationRegistry {
  readonly #live = new Map<string, LiveInvocation>();
  readonly #hooks = new Set<Promise<void>>();
  readonly #onEnded: InvocationEndedHook | undefined;

  constructor(options: { readonly onEnded?: InvocationEndedHook } = {}) {
    this.#onEnded = options.onEnded;
  }

  /** Tracks `running` until it ends. */
  add(running: RunningInvocation): LiveInvocation {
    const live = new LiveInvocation(running);
    const id = running.invocation.invocationId;
    this.#live.set(id, live);
    void live.ended.then(() => {
      if (this.#live.get(id) === live) this.#live.delete(id);
    });
    const onEnded = this.#onEnded;
    if (onEnded !== undefined) {
      // Owned here and awaited by `drained()`; a failing hook never touches the run.
      const hook: Promise<void> = live.ended
        .then(() => onEnded(running.invocation))
        .catch(() => undefined)
        .finally(() => this.#hooks.delete(hook));
      this.#hooks.add(hook);
    }
    return live;
  }

  /** The live run of `invocationId`, if this server runs it. */
  get(invocationId: string): LiveInvocation | undefined {
    return this.#live.get(invocationId);
  }

  /** Whether `sessionId` has a run live on this server. */
  runsSession(sessionId: string): boolean {
    for (const live of this.#live.values()) if (live.invocation.sessionId === sessionId) return true;
    return false;
  }

  /** Lets every held run go on (the server is closing: nobody will commit them). */
  releaseAll(): void {
    for (const live of this.#live.values()) live.releaseHandoff();
  }

  /** Cancels every live run; in-flight effects still finish and settle. */
  cancelAll(): void {
    for (const live of this.#live.values()) live.cancel();
  }

  /** Resolves when every run this registry tracks has ended. */
  async drained(): Promise<void> {
    while (this.#live.size > 0) await Promise.all([...this.#live.values()].map((live) => live.ended));
    while (this.#hooks.size > 0) await Promise.all([...this.#hooks]);
  }
}
