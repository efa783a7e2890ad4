import { FactumError } from './factum-error.js';

const marker = Symbol.for('@factum/commit-error');

/**
 * What a failed commit says about the write:
 * - `rejected`: definitely not written; nothing of it is in the log.
 * - `outcome_unknown`: it may or may not be in the log; treat it as possibly durable.
 */
export type CommitOutcome = 'rejected' | 'outcome_unknown';

/**
 * An `EventSink.commit` that did not confirm durability. Callers must never report a
 * tool's success past one of these; the tools layer turns it into a persistence error.
 * `code` narrows why (for example `duplicate_dispatch`, `sealed_invocation`).
 */
export class CommitError extends FactumError {
  readonly outcome: CommitOutcome;
  readonly [marker] = true;

  constructor(outcome: CommitOutcome, message: string, options: { code?: string; cause?: unknown } = {}) {
    super(options.code ?? `commit_${outcome}`, message, options);
    this.outcome = outcome;
  }

  static rejected(message: string, options: { code?: string; cause?: unknown } = {}): CommitError {
    return new CommitError('rejected', message, options);
  }

  static outcomeUnknown(message: string, options: { code?: string; cause?: unknown } = {}): CommitError {
    return new CommitError('outcome_unknown', message, options);
  }

  static override isInstance(value: unknown): value is CommitError {
    return FactumError.isInstance(value) && (value as unknown as Record<symbol, unknown>)[marker] === true;
  }
}
