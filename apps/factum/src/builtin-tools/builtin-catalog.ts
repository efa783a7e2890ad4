import { ToolCatalog, type ToolRegistration } from '@factum/tools';
import type { CommandProcesses } from './command-processes.js';
import { readFileTool, writeFileTool } from './file-tools.js';
import { listFilesTool } from './list-files-tool.js';
import { searchTool } from './search-tool.js';
import { findSandbox, type ShellIsolation } from './shell-sandbox.js';
import { shellTool } from './shell-tool.js';
import type { Workspace } from './workspace.js';

/** Which built-in tools a run gets. */
export type BuiltinToolOptions = {
  readonly workspace: Workspace;
  /** Offer `shell` (only when the user asked with `--allow-shell`). */
  readonly allowShell?: boolean;
  /**
   * How the shell is isolated. Found when not given (bubblewrap, else util-linux's
   * `unshare`, on Linux; `FACTUM_SANDBOX` may force one); where no sandbox can be made
   * the shell is not offered — unless this says `none`, which only the user's
   * `--unsandboxed-shell` may choose.
   */
  readonly isolation?: ShellIsolation;
  /** Let sandboxed commands reach the network (`--allow-network`). */
  readonly allowNetwork?: boolean;
  /** Where running commands are registered, so a forced exit kills them. */
  readonly processes?: CommandProcesses;
  /** The environment commands' allow-listed variables come from (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
};

/** The built-in tools' registrations, confined to the workspace. */
export function builtinTools(options: BuiltinToolOptions): ToolRegistration[] {
  const { workspace } = options;
  const isolation = options.allowShell ? (options.isolation ?? findSandbox(options.env)) : undefined;
  return [
    readFileTool(workspace),
    writeFileTool(workspace),
    listFilesTool(workspace),
    searchTool(workspace),
    ...(isolation === undefined
      ? []
      : [
          shellTool(workspace, {
            isolation,
            ...(options.allowNetwork === undefined ? {} : { allowNetwork: options.allowNetwork }),
            ...(options.processes === undefined ? {} : { processes: options.processes }),
            ...(options.env === undefined ? {} : { env: options.env }),
          }),
        ]),
  ];
}

/**
 * The catalog of built-in tools: read_file, write_file, list_files, search, and shell
 * only when allowed and isolated. Without it the model is never told about a shell,
 * and a call to one is rejected as unavailable before anything runs.
 *
 * @example
 * const tools = builtinCatalog({ workspace: await Workspace.open(process.cwd()) });
 */
export function builtinCatalog(options: BuiltinToolOptions): ToolCatalog {
  return new ToolCatalog(builtinTools(options));
}
