import { CommitError } from '@factum/agent-facts';
import type { AppendRefusal } from './rule-refusal.js';

export type { AppendRefusal } from './rule-refusal.js';

const marker = Symbol.for('@factum/append-refused-error');

/**
 * The log refused a write because it breaks one of its rules (a second dispatch of an
 * operation, an append after `invocation_ended`, a settlement without its dispatch…).
 * It is a `CommitError` with outcome `rejected`: nothing of the write is in the log.
 */
export class AppendRefusedError extends CommitError {
  override readonly code: AppendRefusal;
  readonly [marker] = true;

  constructor(code: AppendRefusal, message: string, options: { cause?: unknown } = {}) {
    super('rejected', message, { code, cause: options.cause });
    this.code = code;
  }

  static override isInstance(value: unknown): value is AppendRefusedError {
    return CommitError.isInstance(value) && (value as unknown as Record<symbol, unknown>)[marker] === true;
  }
}
