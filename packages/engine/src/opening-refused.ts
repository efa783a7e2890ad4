import { AppendRefusedError } from '@factum/event-log';
import { RunError } from './run-error.js';

/**
 * The typed error of a run whose opening the log refused: the session was made busy or
 * held by another process's run (or kept moving under the run's first step), or this
 * host lost its lease. Anything else is a persistence failure.
 */
export function openingRefused(error: unknown): RunError {
  if (AppendRefusedError.isInstance(error)) {
    if (error.code === 'session_busy') return new RunError('busy', error.message, { cause: error });
    if (error.code === 'session_held') return new RunError('sealed', error.message, { cause: error });
    // Other writers kept appending to the session while the run built its first step.
    if (error.code === 'session_moved') return new RunError('busy', error.message, { cause: error });
    if (error.code === 'duplicate_invocation') {
      return new RunError('duplicate_invocation', error.message, { cause: error });
    }
    if (error.code === 'lease_expired') return new RunError('lease_lost', error.message, { cause: error });
  }
  return new RunError('persistence', 'the opening of the invocation could not be recorded', { cause: error });
}
