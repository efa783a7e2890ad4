import { FactumError } from '@factum/agent-facts';

const marker = Symbol.for('factum/cli-error');

/**
 * Why a command stopped:
 * - `usage`: the arguments do not make sense together; the message says what to pass.
 * - `not_found`: the session, run or invocation named is not in the log.
 * - `nothing_to_resume`: the run named completed; a new message is a new turn, not a resume.
 * - `demo_failed`: a step of the demo did not go as the story says (a bug to report).
 * - `no_sandbox`: `--allow-shell` was passed where no sandbox can be made.
 */
export type CliErrorCode = 'usage' | 'not_found' | 'nothing_to_resume' | 'demo_failed' | 'no_sandbox';

/** A command's own error: printed as one line, exit code 2 for usage and `no_sandbox`, 1 otherwise. */
export class CliError extends FactumError {
  override readonly code: CliErrorCode;
  readonly [marker] = true;

  constructor(code: CliErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
    this.code = code;
  }

  static override isInstance(value: unknown): value is CliError {
    return FactumError.isInstance(value) && (value as unknown as Record<symbol, unknown>)[marker] === true;
  }
}
