import { FactumError } from '@factum/agent-facts';

const marker = Symbol.for('@factum/event-log-error');

/**
 * A read or lifecycle failure of the log:
 * - `bounds_exceeded`: the history asked for is larger than the bounds given; nothing
 *   is silently cut, raise the bounds or page with `read`.
 * - `corrupt_row`: a stored row no longer parses; `sequence` names it.
 * - `result_missing`: a tool result the log should hold is not there.
 * - `closed`: the log was closed.
 * - `lease_held`: `holdLease` was called on a log that already holds one.
 * - `store_unreachable`: the store did not answer in time, or the connection was lost.
 * - `invalid_option`: an option of `open` is out of range; nothing was opened.
 * - `target_not_empty`: `EventLog.copy` was given a target that already holds rows;
 *   nothing was written to it.
 */
export class EventLogError extends FactumError {
  override readonly code:
    | 'bounds_exceeded'
    | 'corrupt_row'
    | 'result_missing'
    | 'closed'
    | 'open_failed'
    | 'lease_held'
    | 'store_unreachable'
    | 'invalid_option'
    | 'target_not_empty';
  readonly sequence: number | undefined;
  readonly [marker] = true;

  constructor(
    code: EventLogError['code'],
    message: string,
    options: { cause?: unknown; sequence?: number } = {},
  ) {
    super(code, message, options);
    this.code = code;
    this.sequence = options.sequence;
  }

  static override isInstance(value: unknown): value is EventLogError {
    return FactumError.isInstance(value) && (value as unknown as Record<symbol, unknown>)[marker] === true;
  }
}
