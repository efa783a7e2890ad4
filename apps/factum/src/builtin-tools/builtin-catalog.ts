import { ToolCatalog, type ToolRegistration } from '@factum/tools';
import { readFileTool, writeFileTool } from './file-tools.js';
import { listFilesTool } from './list-files-tool.js';
import { searchTool } from './search-tool.js';
import { shellTool } from './shell-tool.js';
import type { Workspace } from './workspace.js';

/** Which built-in tools a run gets. */
export type BuiltinToolOptions = {
  readonly workspace: Workspace;
  /** Offer `shell` (only when the user asked with `--allow-shell`). */
  readonly allowShell?: boolean;
};

/** The built-in tools' registrations, confined to the workspace. */
export function builtinTools(options: BuiltinToolOptions): ToolRegistration[] {
  const { workspace } = options;
  return [
    readFileTool(workspace),
    writeFileTool(workspace),
    listFilesTool(workspace),
    searchTool(workspace),
    ...(options.allowShell ? [shellTool(workspace)] : []),
  ];
}

/**
 * The catalog of built-in tools: read_file, write_file, list_files, search, and shell
 * only when allowed. Without `allowShell` the model is never told about a shell, and
 * a call to one is rejected as unavailable before anything runs.
 *
 * @example
 * const tools = builtinCatalog({ workspace: await Workspace.open(process.cwd()) });
 */
export function builtinCatalog(options: BuiltinToolOptions): ToolCatalog {
  return new ToolCatalog(builtinTools(options));
}
