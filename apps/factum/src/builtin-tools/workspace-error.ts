import { FactumError } from '@factum/agent-facts';

const marker = Symbol.for('factum/workspace-error');

/**
 * Why a built-in tool refused a path or an input:
 * - `outside_workspace`: the path (after `..`, symlinks and absolute forms are resolved) leaves the workspace.
 * - `protected_path`: the path leads into Factum's own state (its data directory or its user configuration).
 * - `not_found`: nothing exists at the path.
 * - `not_a_file` / `not_a_directory`: the path names the wrong kind of entry.
 * - `hard_link`: a write through a file with more than one hard link (it may be an outside file's other name).
 * - `changed_during_open`: the entry was replaced while it was being opened; nothing was read or written.
 * - `too_many_links`: resolving the path followed too many symbolic links.
 * - `result_too_large`: the result would pass the byte bound every built-in tool's result has.
 */
export type WorkspaceErrorCode =
  | 'outside_workspace'
  | 'protected_path'
  | 'not_found'
  | 'not_a_file'
  | 'not_a_directory'
  | 'hard_link'
  | 'changed_during_open'
  | 'too_many_links'
  | 'result_too_large';

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
