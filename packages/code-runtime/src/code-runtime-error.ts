const marker = Symbol.for('@factum/code-runtime/error');

/** Options shared by every error of this package. */
export interface CodeRuntimeErrorOptions {
  /** The underlying failure, if any. */
  readonly cause?: unknown;
}

/**
 * Base class of every error thrown by `@factum/code-runtime`. Match on `code`,
 * which is stable across releases; use {@link CodeRuntimeError.isInstance} rather
 * than `instanceof` so that two copies of the package still recognise each other.
 */
export class CodeRuntimeError extends Error {
  /** Stable, machine-readable error code (snake_case). */
  readonly code: string;
  readonly [marker] = true;

  constructor(code: string, message: string, options: CodeRuntimeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CodeRuntimeError';
    this.code = code;
  }

  /** True for any error of this package, even one created by another copy of it. */
  static isInstance(value: unknown): value is CodeRuntimeError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true;
  }
}
