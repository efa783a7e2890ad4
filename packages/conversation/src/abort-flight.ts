import type { AbortResult } from './conversation-backend.js';
import { ConversationError } from './conversation-error.js';

type Settlement =
  | { readonly ok: true; readonly value: AbortResult }
  | { readonly ok: false; readonly error: unknown };

/**
 * One abort reconciliation in flight for one prompt generation, shared by every
 * `abort()` observer that attaches to it. The work belongs to the backend, not to an
 * observer: an observer that goes away leaves the outcome to the others, and an
 * outcome nobody received is kept for the next observer of the same generation.
 */
export class AbortFlight {
  readonly generation: number;
  readonly #settlement: Promise<Settlement>;
  #settled = false;
  #published = false;

  constructor(generation: number, work: Promise<AbortResult>) {
    this.generation = generation;
    this.#settlement = work.then(
      (value) => ({ ok: true, value }),
      (error: unknown) => ({ ok: false, error }),
    );
    void this.#settlement.then(() => {
      this.#settled = true;
    });
  }

  /** True once the reconciliation ended (whether or not anyone received it). */
  get settled(): boolean {
    return this.#settled;
  }

  /** True once an observer has received the outcome. */
  get published(): boolean {
    return this.#published;
  }

  /** Waits for the outcome as one observer; `signal` ends only this observer's wait. */
  async observe(signal: AbortSignal | undefined): Promise<AbortResult> {
    const settlement = await raceSignal(this.#settlement, signal);
    this.#published = true;
    if (settlement.ok) return settlement.value;
    throw settlement.error;
  }
}

/** `work`, or a `cancelled` error as soon as `signal` aborts (the work goes on). */
export function raceSignal<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  const cancelled = () =>
    new ConversationError('the caller stopped waiting for the abort; the reconciliation goes on', {
      kind: 'cancelled',
      context: { operation: 'abort', phase: 'reconciliation' },
      cause: signal.reason,
    });
  if (signal.aborted) return Promise.reject(cancelled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelled());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
