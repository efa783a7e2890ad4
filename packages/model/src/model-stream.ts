import type { ModelObservation, ModelStep } from '@factum/agent-facts';

/**
 * One streamed model request. Iterate it for observations as they arrive, await
 * `step()` for the whole answer, or both, in any order: observations are kept, so an
 * iterator started late (or a second one) still sees every observation from the first.
 * The request runs whether or not anyone iterates; breaking out of a loop does not
 * cancel it (abort the signal for that). When the request fails, an iterator yields
 * what was observed and then throws the same `ModelError` that `step()` rejects with.
 *
 * @example
 * ```ts
 * const stream = executor.stream(request, { provider, signal });
 * for await (const observation of stream) if (observation.kind === 'text_delta') process.stdout.write(observation.text);
 * const step = await stream.step();
 * ```
 */
export class ModelStream implements AsyncIterable<ModelObservation> {
  readonly #observations: ModelObservation[] = [];
  readonly #step: Promise<ModelStep>;
  #waiters: (() => void)[] = [];
  #settled = false;
  #failed = false;
  #error: unknown;

  /** @internal The executor starts the work and hands the stream a way to report it. */
  constructor(run: (emit: (observation: ModelObservation) => void) => Promise<ModelStep>) {
    this.#step = run((observation) => {
      this.#observations.push(observation);
      this.#wake();
    }).then(
      (step) => {
        this.#settle(false, undefined);
        return step;
      },
      (error: unknown) => {
        this.#settle(true, error);
        throw error;
      },
    );
    // The failure reaches whoever awaits step() or iterates; nobody doing so is not a crash.
    this.#step.catch(() => {});
  }

  /** How many observations have arrived so far. */
  get observed(): number {
    return this.#observations.length;
  }

  /** The whole answer, once the stream has ended. Rejects with a `ModelError`. */
  step(): Promise<ModelStep> {
    return this.#step;
  }

  [Symbol.asyncIterator](): AsyncIterator<ModelObservation> {
    let position = 0;
    let closed = false;
    return {
      next: async (): Promise<IteratorResult<ModelObservation>> => {
        while (!closed) {
          const observation = this.#observations[position];
          if (observation !== undefined) {
            position += 1;
            return { value: observation, done: false };
          }
          if (this.#settled) {
            closed = true;
            if (this.#failed) throw this.#error;
            break;
          }
          await new Promise<void>((resolve) => this.#waiters.push(resolve));
        }
        return { value: undefined, done: true };
      },
      return: async (): Promise<IteratorResult<ModelObservation>> => {
        closed = true;
        return { value: undefined, done: true };
      },
    };
  }

  #settle(failed: boolean, error: unknown): void {
    this.#settled = true;
    this.#failed = failed;
    this.#error = error;
    this.#wake();
  }

  #wake(): void {
    if (this.#waiters.length === 0) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}
