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
  | 'lease_lost';

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
