import { CommitError } from '@factum/agent-facts';

const marker = Symbol.for('@factum/append-refused-error');

/** Why the log refused a write. Each refusal writes nothing. */
export type AppendRefusal =
  | 'duplicate_dispatch'
  | 'duplicate_event'
  | 'duplicate_invocation'
  | 'sealed_invocation'
  | 'unknown_invocation'
  | 'unknown_operation'
  | 'operation_closed'
  | 'parent_not_open'
  | 'session_busy'
  | 'session_held'
  | 'invalid_write'
  | 'write_too_large';

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
