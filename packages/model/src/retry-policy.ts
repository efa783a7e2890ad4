import type { ModelError } from './model-error.js';

/**
 * How failed attempts are retried. Only errors that may pass (`rate_limited`, `server`,
 * `network`, `timeout`) are retried, and only while nothing of the answer has been
 * observed: a retry after the first observation could show the consumer two
 * different answers.
 * - `maxAttempts` (default 3): attempts in total, the first included; 1 turns retries off.
 * - `initialDelayMs` (default 500) doubling up to `maxDelayMs` (default 8000), with
 *   equal jitter: the pause is between half and all of the backoff.
 * - A provider's `retry-after` (or `retry-after-ms`) is waited exactly instead, unless
 *   it is longer than `maxRetryAfterMs` (default 60000): then the error is final and
 *   carries `retryAfterMs` for the caller to decide.
 */
export type RetryOptions = {
  readonly maxAttempts?: number;
  readonly initialDelayMs?: number;
  readonly maxDelayMs?: number;
  readonly maxRetryAfterMs?: number;
};

/** The pauses between attempts of one executor. */
export class RetryPolicy {
  readonly maxAttempts: number;
  readonly #initialDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #maxRetryAfterMs: number;
  readonly #random: () => number;

  constructor(options: RetryOptions, random: () => number) {
    this.maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? 3));
    this.#initialDelayMs = options.initialDelayMs ?? 500;
    this.#maxDelayMs = options.maxDelayMs ?? 8000;
    this.#maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
    this.#random = random;
  }

  /**
   * The pause before attempt `attempt + 1`, or `undefined` when `error` after
   * `attempt` attempts is final.
   */
  delayAfter(error: ModelError, attempt: number, observed: boolean): number | undefined {
    if (observed || !error.retryable || attempt >= this.maxAttempts) return undefined;
    if (error.retryAfterMs !== undefined) {
      return error.retryAfterMs <= this.#maxRetryAfterMs ? error.retryAfterMs : undefined;
    }
    const backoff = Math.min(this.#maxDelayMs, this.#initialDelayMs * 2 ** (attempt - 1));
    return Math.round(backoff / 2 + (this.#random() * backoff) / 2);
  }
}
