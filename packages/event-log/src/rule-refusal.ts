/** Why the log refused a write. Each refusal writes nothing. */
export type AppendRefusal =
  | 'duplicate_dispatch'
  | 'duplicate_attempt'
  | 'duplicate_event'
  | 'duplicate_invocation'
  | 'duplicate_submission'
  | 'sealed_invocation'
  | 'unknown_invocation'
  | 'unknown_operation'
  | 'operation_closed'
  | 'parent_not_open'
  | 'session_busy'
  | 'session_held'
  | 'session_moved'
  | 'invalid_write'
  | 'write_too_large'
  | 'fenced'
  | 'lease_expired'
  | 'owner_live'
  | 'host_row_invalid'
  | 'approval_unknown'
  | 'approval_decided_twice'
  | 'approval_input_mismatch'
  | 'approval_missing'
  | 'approval_not_expired'
  | 'session_exists'
  | 'unknown_session'
  | 'invalid_boundary'
  | 'source_live';

/**
 * A rule refused one write of a batch. Plain data with no dependency, so the rules run
 * the same on the event loop and in the writer thread; the log hands it to the caller
 * as an `AppendRefusedError`.
 */
export class RuleRefusal extends Error {
  readonly code: AppendRefusal;

  constructor(code: AppendRefusal, message: string) {
    super(message);
    this.name = 'RuleRefusal';
    this.code = code;
  }
}
