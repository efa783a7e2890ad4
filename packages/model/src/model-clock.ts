/**
 * Time as the executor sees it: deadlines and retry pauses. Tests pass their own to
 * record backoff delays without sleeping; production uses `systemClock`.
 */
export interface ModelClock {
  /** Milliseconds on a monotonic scale. */
  now(): number;
  /** Calls `callback` after `ms`; the returned function cancels it. */
  setTimer(ms: number, callback: () => void): () => void;
  /** Resolves after `ms`; rejects with the signal's reason when it aborts first. */
  sleep(ms: number, options?: { readonly signal?: AbortSignal }): Promise<void>;
}

/** The real clock: `performance.now()` and Node timers. */
export const systemClock: ModelClock = {
  now: () => performance.now(),
  setTimer(ms, callback) {
    const handle = setTimeout(callback, ms);
    return () => clearTimeout(handle);
  },
  sleep(ms, options = {}) {
    const { signal } = options;
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        clearTimeout(handle);
        reject(signal?.reason);
      };
      const handle = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
};
