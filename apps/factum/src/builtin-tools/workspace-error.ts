import { FactumError } from '@factum/agent-facts';

const marker = Symbol.for('factum/workspace-error');

/**
 * Why a built-in tool refused a path or an input:
 * - `outside_workspace`: the path (after `..`, symlinks and absolute forms are resolved) leaves the workspace.
 * - `not_found`: nothing exists at the path.
 * - `not_a_file` / `not_a_directory`: the path names the wrong kind of entry.
 */
export type WorkspaceErrorCode = 'outside_workspace' | 'not_found' | 'not_a_file' | 'not_a_directory';

/** A built-in tool refused its input; the message says what to do instead. */
export class WorkspaceError extends FactumError {
  override readonly code: WorkspaceErrorCode;
  readonly [marker] = true;

  constructor(code: WorkspaceErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
    this.code = code;
  }

  static override isInstance(value: unknown): value is WorkspaceError {
    return FactumError.isInstance(value) && (value as unknown as Record<symbol, unknown>)[marker] === true;
  }
}
