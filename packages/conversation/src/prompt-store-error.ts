import { FactumError } from '@factum/agent-facts';

const marker = Symbol.for('@factum/prompt-store-error');

/**
 * Why a prompt-store step failed:
 * - `conflict`: definitely not applied; the transaction must be rolled back and may be retried.
 * - `unavailable`: the store could not answer. On `commit` this means the outcome is unknown.
 */
export type PromptStoreFailure = 'conflict' | 'unavailable';

/**
 * What a `PromptStore` implementation throws. Any other error thrown by a store is
 * treated as `unavailable`.
 */
export class PromptStoreError extends FactumError {
  readonly reason: PromptStoreFailure;
  readonly [marker] = true;

  constructor(reason: PromptStoreFailure, message: string, options: { cause?: unknown } = {}) {
    super(`prompt_store_${reason}`, message, options);
    this.reason = reason;
  }

  /** A definite conflict: nothing of the step was applied. */
  static conflict(message: string, options: { cause?: unknown } = {}): PromptStoreError {
    return new PromptStoreError('conflict', message, options);
  }

  /** The store could not answer; after `commit`, the outcome is unknown. */
  static unavailable(message: string, options: { cause?: unknown } = {}): PromptStoreError {
    return new PromptStoreError('unavailable', message, options);
  }

  /** True for a `PromptStoreError`, even one made by another copy of this package. */
  static override isInstance(value: unknown): value is PromptStoreError {
    return FactumError.isInstance(value) && (value as unknown as Record<symbol, unknown>)[marker] === true;
  }
}

/** The failure class of anything a store threw. */
export function storeFailureOf(error: unknown): PromptStoreFailure {
  return PromptStoreError.isInstance(error) ? error.reason : 'unavailable';
}
