import { FactumError } from './factum-error.js';

const marker = Symbol.for('@factum/tool-error');

/**
 * How a tool call ended when it did not succeed:
 * - `persistence`: a commit at T1, T2 or a notification failed; the effect may or may
 *   not have happened and is never reported as success.
 * - `invalid_input` / `unavailable` / `not_nestable` / `cancelled`: rejected; nothing ran.
 * - `failed`: the effect ran and failed; the failure is recorded.
 * - `invalid_output`: the effect returned something its output schema refuses.
 * - `outcome_unknown`: thrown by an effect that cannot tell whether it took place (its
 *   server died mid-call, or a cancellation reached it mid-call). The call is not
 *   settled: it stays uncertain, for reconciliation or a person to decide, and the run
 *   stops as it does on `persistence`.
 */
export type ToolErrorCode =
  | 'persistence'
  | 'invalid_input'
  | 'unavailable'
  | 'not_nestable'
  | 'cancelled'
  | 'failed'
  | 'invalid_output'
  | 'outcome_unknown'
  | 'limit_exceeded';

/** The typed failure of a tool call. */
export class ToolError extends FactumError {
  override readonly code: ToolErrorCode;
  readonly [marker] = true;

  constructor(code: ToolErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
    this.code = code;
  }

  static override isInstance(value: unknown): value is ToolError {
    return FactumError.isInstance(value) && (value as unknown as Record<symbol, unknown>)[marker] === true;
  }
}
