/** A cancellable one-shot timer. */
export type TimerHandle = { cancel(): void };

/**
 * Time as the conversation sees it. Injected so that tests can count the timers a
 * backend owns and make sure none outlives it.
 */
export interface Clock {
  /** Milliseconds on a monotonic scale. */
  now(): number;
  /** Calls `callback` once after `ms` unless cancelled first. */
  setTimer(ms: number, callback: () => void): TimerHandle;
}

/** The process clock: `performance.now()` and `setTimeout`. */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimer(ms, callback) {
    const timer = setTimeout(callback, Math.max(0, ms));
    return { cancel: () => clearTimeout(timer) };
  },
};

/**
 * Resolves after `ms`, or rejects with the signal's reason as soon as `signal` aborts.
 * The timer and the listener are always released.
 */
export function sleep(
  clock: Clock,
  ms: number,
  options: { readonly signal?: AbortSignal } = {},
): Promise<void> {
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      timer.cancel();
      reject(signal?.reason);
    };
    const timer = clock.setTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
