import { FactumError } from '@factum/agent-facts';

const marker = Symbol.for('@factum/conversation-error');

/**
 * What went wrong, coarsely: the class of failure a caller can act on.
 * - `protocol`: the agent server said something that breaks the protocol (bad JSON, bad SSE).
 * - `timeout`: a deadline elapsed before the work was confirmed.
 * - `conflict`: the prompt store reported a transaction conflict, or the server answered
 *   another prompt than ours and ours could not be found (`detail.kind: 'foreign_answer'`).
 * - `integration`: a dependency failed (store unavailable, HTTP failure, unknown commit outcome).
 * - `invalid_state`: the conversation's state does not allow the operation, or its outcome was lost.
 * - `cancelled`: the caller's own signal ended the wait.
 */
export type ErrorKind = 'protocol' | 'timeout' | 'conflict' | 'integration' | 'invalid_state' | 'cancelled';

/** The public operation during which the error happened. */
export type ErrorOperation = 'open' | 'prompt' | 'abort' | 'close';

/**
 * Where in the operation the error happened. The `state_*` phases are prompt-store
 * steps; `cleanup` is a rollback; `reconciliation` is the abort's durable repair loop.
 */
export type ErrorPhase =
  | 'session'
  | 'admission'
  | 'request'
  | 'stream'
  | 'response'
  | 'delivery'
  | 'state_begin'
  | 'state_read'
  | 'state_write'
  | 'state_commit'
  | 'receipt_read'
  | 'cleanup'
  | 'reconciliation'
  | 'cancellation';

/** Which deadline elapsed: the whole operation's, or one HTTP request's. */
export type DeadlineKind = 'operation' | 'request';

/**
 * A precise, matchable reason. `deadline_elapsed.timeoutMs` is `null` for an operation
 * deadline (an instant inherited from the caller) and the configured budget otherwise.
 */
export type ErrorDetail =
  | { readonly kind: 'transaction_conflict' }
  | { readonly kind: 'service_unavailable' }
  | { readonly kind: 'foreign_answer'; readonly messageId: string; readonly answeredParentId: string | null }
  | { readonly kind: 'unsupported_version'; readonly version: string }
  | { readonly kind: 'deadline_elapsed'; readonly deadline: DeadlineKind; readonly timeoutMs: number | null };

/** Operation and phase of a `ConversationError`. */
export type ErrorContext = { readonly operation: ErrorOperation; readonly phase: ErrorPhase };

/** Everything a `ConversationError` is made of besides its message. */
export type ConversationErrorInit = {
  readonly kind: ErrorKind;
  readonly context: ErrorContext;
  readonly detail?: ErrorDetail;
  readonly supplementary?: readonly ConversationError[];
  readonly cause?: unknown;
};

/**
 * The one error class of `@factum/conversation`. `kind`, `context` and `detail` are
 * stable and meant to be matched on; `supplementary` keeps errors that happened while
 * handling this one (a failed rollback, the last conflict before a deadline) so that
 * no failure is silently dropped.
 *
 * @example
 * ```ts
 * try {
 *   await backend.abort();
 * } catch (error) {
 *   if (ConversationError.isInstance(error) && error.kind === 'timeout') {
 *     console.log(error.context.phase, error.supplementary.map((e) => e.detail));
 *   }
 * }
 * ```
 */
export class ConversationError extends FactumError {
  readonly kind: ErrorKind;
  readonly context: ErrorContext;
  readonly detail: ErrorDetail | undefined;
  readonly supplementary: readonly ConversationError[];
  readonly [marker] = true;

  constructor(message: string, init: ConversationErrorInit) {
    super(`conversation_${init.kind}`, message, { cause: init.cause });
    this.kind = init.kind;
    this.context = init.context;
    this.detail = init.detail;
    this.supplementary = init.supplementary ?? [];
  }

  /** A copy of this error with `extra` appended to its supplementary errors. */
  withSupplementary(extra: readonly ConversationError[]): ConversationError {
    if (extra.length === 0) return this;
    return new ConversationError(this.message, {
      kind: this.kind,
      context: this.context,
      detail: this.detail,
      supplementary: [...this.supplementary, ...extra],
      cause: this.cause,
    });
  }

  /** True for a `ConversationError`, even one made by another copy of this package. */
  static override isInstance(value: unknown): value is ConversationError {
    return FactumError.isInstance(value) && (value as unknown as Record<symbol, unknown>)[marker] === true;
  }
}
