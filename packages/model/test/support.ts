import type { ModelObservation, ModelStep } from '@factum/agent-facts';
import type { ModelRequest, ModelStreamOptions } from '../src/index.js';
import {
  type ModelClock,
  ModelError,
  ModelExecutor,
  type ModelExecutorOptions,
  systemClock,
} from '../src/index.js';

/** A request with one user message and no tools. */
export const hello: ModelRequest = { messages: [{ role: 'user', content: 'hello' }], tools: [] };

/** An executor that does not retry unless a test asks it to. */
export function executor(options: Partial<ModelExecutorOptions> = {}): ModelExecutor {
  return new ModelExecutor({ timeoutMs: 5_000, retry: { maxAttempts: 1 }, ...options });
}

/** A clock that records retry pauses instead of sleeping through them. */
export function recordingClock(): { clock: ModelClock; delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    clock: {
      ...systemClock,
      sleep: async (ms, options = {}) => {
        options.signal?.throwIfAborted();
        delays.push(ms);
      },
    },
  };
}

/** Runs a request to the end: every observation and the step. */
export async function collect(
  models: ModelExecutor,
  request: ModelRequest,
  options: ModelStreamOptions,
): Promise<{ observations: ModelObservation[]; step: ModelStep }> {
  const stream = models.stream(request, options);
  const observations: ModelObservation[] = [];
  for await (const observation of stream) observations.push(observation);
  return { observations, step: await stream.step() };
}

/** The `ModelError` a promise rejects with; fails the test if it resolves or throws anything else. */
export async function modelError(promise: Promise<unknown>): Promise<ModelError> {
  try {
    await promise;
  } catch (error) {
    if (ModelError.isInstance(error)) return error;
    throw new Error(`expected a ModelError, got ${String(error)}`, { cause: error });
  }
  throw new Error('expected a ModelError, but the promise resolved');
}

/** Resolves with `promise`, or fails after `ms` saying what did not happen. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
