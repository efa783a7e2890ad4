const marker = Symbol.for('@factum/error');

/** Options every Factum error accepts. */
export type FactumErrorOptions = { readonly cause?: unknown };

/**
 * Base class of every error Factum throws on purpose. `code` is stable and safe to
 * match on; `isInstance` works across duplicate copies of a package in one process.
 */
export class FactumError extends Error {
  readonly code: string;
  readonly [marker] = true;

  constructor(code: string, message: string, options: FactumErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
  }

  /** True for any Factum error, even one made by another copy of this package. */
  static isInstance(value: unknown): value is FactumError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true;
  }
}
