import { CodeRuntimeError, type CodeRuntimeErrorOptions } from './code-runtime-error.js';

const marker = Symbol.for('@factum/code-runtime/fatal-host-error');

/**
 * Thrown (or rejected) by a {@link CellBridge} to say that a host failure must end
 * the cell at once: the cell is terminated before any more JavaScript runs, so
 * JS `catch` and `finally` never observe the failure, and the result is
 * `{ kind: 'fatal' }` naming the call. Use it for failures the cell's code must
 * not be able to paper over, such as a record of the call that could not be
 * persisted.
 *
 * @example
 * ```ts
 * const bridge: CellBridge = {
 *   tools: ['effect'],
 *   async call({ name, input }) {
 *     try {
 *       return await runTool(name, input);
 *     } catch (error) {
 *       if (isPersistenceFailure(error)) throw new FatalHostError('could not record the call', { cause: error });
 *       throw error;
 *     }
 *   },
 * };
 * ```
 */
export class FatalHostError extends CodeRuntimeError {
  readonly [marker] = true;

  constructor(message: string, options: CodeRuntimeErrorOptions = {}) {
    super('fatal_host_error', message, options);
    this.name = 'FatalHostError';
  }

  /** True for a fatal host error, even one created by another copy of this package. */
  static override isInstance(value: unknown): value is FatalHostError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true;
  }
}
