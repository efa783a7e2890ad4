import { CodeRuntimeError } from './code-runtime-error.js';

/**
 * The abort reason given to the signal of a host call that was still in flight
 * when its cell was terminated (deadline, cancellation, a fatal host failure or
 * a limit). `reason` is the kind of the cell's result.
 */
export class CellTerminatedError extends CodeRuntimeError {
  /** Why the cell ended: the `kind` its result will carry. */
  readonly reason: string;

  constructor(reason: string) {
    super(
      'cell_terminated',
      `the cell was terminated (${reason}); its host calls are no longer awaited by JS`,
    );
    this.name = 'CellTerminatedError';
    this.reason = reason;
  }
}
