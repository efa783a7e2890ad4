import { FactumError } from '@factum/agent-facts';

const marker = Symbol.for('@factum/model-error');

/**
 * Stable codes of every way a model request can fail.
 *
 * | code | when |
 * |---|---|
 * | `auth` | 401 / 403 |
 * | `rate_limited` | 429 or an in-stream rate-limit error |
 * | `quota_exceeded` | the account is out of quota or credit (`insufficient_quota`, 402): waiting does not help |
 * | `content_filtered` | the provider's content filter refused the request (`content_filter`, `content_policy_violation`) |
 * | `context_overflow` | the request does not fit the model's context window |
 * | `bad_request` | any other 4xx: the provider refused the request as sent |
 * | `server` | 5xx or an in-stream overload / server error |
 * | `network` | the connection failed or dropped |
 * | `timeout` | a deadline passed; `phase` says which |
 * | `protocol` | the provider answered, but not in its own wire format |
 * | `cancelled` | the caller's signal aborted; `phase` says before or during |
 */
export type ModelErrorCode =
  | 'auth'
  | 'rate_limited'
  | 'quota_exceeded'
  | 'content_filtered'
  | 'context_overflow'
  | 'bad_request'
  | 'server'
  | 'network'
  | 'timeout'
  | 'protocol'
  | 'cancelled';

/**
 * Where a `timeout` or `cancelled` error happened. Timeouts: `connect` (no response
 * headers in time), `idle` (the body stalled), `total` (the attempt ran too long).
 * Cancellation: `before` (nothing was sent) or `during` (a request was in flight).
 */
export type ModelErrorPhase = 'connect' | 'idle' | 'total' | 'before' | 'during';

/** What exactly was wrong with a provider's answer, for `protocol` errors. */
export type ProtocolIssue =
  | 'malformed_sse'
  | 'malformed_json'
  | 'truncated'
  | 'unknown_finish_reason'
  | 'html_body'
  | 'not_a_stream'
  | 'missing_field';

/** The fields a `ModelError` is made of (besides `code` and `message`). */
export type ModelErrorDetails = {
  readonly status?: number;
  readonly phase?: ModelErrorPhase;
  readonly issue?: ProtocolIssue;
  readonly retryAfterMs?: number;
  readonly attempts?: number;
  readonly cause?: unknown;
};

const retryableCodes: ReadonlySet<ModelErrorCode> = new Set(['rate_limited', 'server', 'network', 'timeout']);

/**
 * A model request that failed. Match on `code` (stable), and on `phase`, `status` or
 * `issue` for detail. Messages say how to fix what can be fixed, and never contain an
 * API key: provider bodies are redacted before they are quoted.
 *
 * @example
 * ```ts
 * try {
 *   await executor.stream(request, { provider }).step();
 * } catch (error) {
 *   if (ModelError.isInstance(error) && error.code === 'rate_limited') console.log(error.retryAfterMs);
 * }
 * ```
 */
export class ModelError extends FactumError {
  declare readonly code: ModelErrorCode;
  readonly status: number | undefined;
  readonly phase: ModelErrorPhase | undefined;
  readonly issue: ProtocolIssue | undefined;
  readonly retryAfterMs: number | undefined;
  /** How many attempts were made before this error was final (1 when it came first time). */
  readonly attempts: number;
  readonly [marker] = true;

  constructor(code: ModelErrorCode, message: string, details: ModelErrorDetails = {}) {
    super(code, message, { cause: details.cause });
    this.status = details.status;
    this.phase = details.phase;
    this.issue = details.issue;
    this.retryAfterMs = details.retryAfterMs;
    this.attempts = details.attempts ?? 1;
  }

  /** Whether the same request may succeed if sent again (before any output was observed). */
  get retryable(): boolean {
    return retryableCodes.has(this.code);
  }

  /** The same error, recording how many attempts were made in total. */
  withAttempts(attempts: number): ModelError {
    if (attempts === this.attempts) return this;
    const suffix = attempts > 1 ? ` (gave up after ${attempts} attempts)` : '';
    return new ModelError(this.code, `${this.message}${suffix}`, {
      status: this.status,
      phase: this.phase,
      issue: this.issue,
      retryAfterMs: this.retryAfterMs,
      attempts,
      cause: this.cause,
    });
  }

  /**
   * The same error with `redact` applied to its message. A cause whose message would
   * change under `redact` is dropped: it quoted provider text with a secret in it.
   */
  redacted(redact: (text: string) => string): ModelError {
    const message = redact(this.message);
    const cause =
      this.cause instanceof Error && redact(this.cause.message) !== this.cause.message
        ? undefined
        : this.cause;
    if (message === this.message && cause === this.cause) return this;
    return new ModelError(this.code, message, {
      status: this.status,
      phase: this.phase,
      issue: this.issue,
      retryAfterMs: this.retryAfterMs,
      attempts: this.attempts,
      cause,
    });
  }

  /** A plain JSON form for logs and facts; contains no secret. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      status: this.status,
      phase: this.phase,
      issue: this.issue,
      retryAfterMs: this.retryAfterMs,
      attempts: this.attempts,
      retryable: this.retryable,
    };
  }

  /** True for any `ModelError`, even one made by another copy of this package. */
  static override isInstance(value: unknown): value is ModelError {
    return FactumError.isInstance(value) && (value as unknown as Record<symbol, unknown>)[marker] === true;
  }
}
