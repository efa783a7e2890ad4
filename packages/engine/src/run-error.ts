import { FactumError } from '@factum/agent-facts';

const marker = Symbol.for('@factum/run-error');

/**
 * Why the engine would not start or finish a run:
 * - `busy`: the session already has a live invocation (maybe still draining an effect).
 * - `sealed`: the session's turn was paused for a handoff to another successor.
 * - `fingerprint_mismatch`: a handoff successor differs from the pause it resumes.
 * - `handoff_mismatch`: the successor is not the one the pause names.
 * - `uncertain_operations`: earlier operations have unknown outcomes; reconcile them first.
 * - `unknown_source`: the boundary to continue from is not in the log.
 * - `invalid_input`: the run input itself is malformed.
 * - `cancelled`: the caller aborted; the run goes on finishing its effects and ends cancelled.
 * - `handoff_unavailable`: the run ended or another handoff is reserved.
 * - `persistence`: the log refused or could not confirm a write the run needed.
 * - `lease_lost`: this host could not renew its lease in time; it starts no new run.
 * - `approval_pending`: a parked run still waits for a person's decision (or, for a new
 *   message, the parked run has not been continued yet).
 * - `approval_unknown`: no approval was requested for that operation.
 * - `approval_decided_twice`: the approval was already decided.
 * - `already_executed`: the operation already ran (or was rejected); nothing to decide.
 * - `approval_input_mismatch`: the decision names an input other than the requested one.
 * - `not_uncertain`: a resolution for an operation that is not uncertain.
 * - `duplicate_invocation`: an invocation with that id was already opened in the session.
 * - `idempotency_conflict`: the idempotency key already started a run with other work
 *   (another message, source or pause); nothing was written.
 */
export type RunErrorCode =
  | 'busy'
  | 'sealed'
  | 'fingerprint_mismatch'
  | 'handoff_mismatch'
  | 'uncertain_operations'
  | 'unknown_source'
  | 'invalid_input'
  | 'cancelled'
  | 'handoff_unavailable'
  | 'persistence'
  | 'lease_lost'
  | 'approval_pending'
  | 'approval_unknown'
  | 'approval_decided_twice'
  | 'already_executed'
  | 'approval_input_mismatch'
  | 'not_uncertain'
  | 'duplicate_invocation'
  | 'idempotency_conflict';

/** A typed refusal or failure of the engine; nothing is written when admission refuses. */
export class RunError extends FactumError {
  override readonly code: RunErrorCode;
  readonly [marker] = true;

  constructor(code: RunErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
    this.code = code;
  }

  static override isInstance(value: unknown): value is RunError {
    return FactumError.isInstance(value) && (value as unknown as Record<symbol, unknown>)[marker] === true;
  }
}
