import { resolve } from 'node:path';
import { RecoveryPolicy, type ToolRegistration } from '@factum/tools';
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { walkFiles } from './walk-files.js';
import type { Workspace } from './workspace.js';

/** Entries `list_files` returns at most. */
export const LIST_LIMIT = 500;

const ListFilesInput = z.strictObject({
  path: z.string().min(1).default('.').describe('a directory relative to the workspace root'),
  recursive: z.boolean().default(false).describe('also list subdirectories (skips .git and node_modules)'),
});

/** `list_files`: a directory's entries, bounded; symlinks are listed, never followed. */
export function listFilesTool(workspace: Workspace): ToolRegistration {
  return defineTool({
    name: 'list_files',
    description: `List the entries of a workspace directory (at most ${LIST_LIMIT}).`,
    input: ListFilesInput,
    nesting: 'nestable',
    semantics: 'parallel',
    readOnly: true,
    recovery: RecoveryPolicy.idempotent(),
    run: async ({ path, recursive }, signal) => {
      const entries: { path: string; type: string }[] = [];
      let truncated = false;
      for await (const entry of walkFiles(workspace, path, { recursive, signal })) {
        if (entries.length === LIST_LIMIT) {
          truncated = true;
          break;
        }
        entries.push({ path: workspace.relative(entry.path), type: entry.type });
      }
      return { path: workspace.relative(resolve(workspace.root, path)), entries, truncated };
    },
  });
}
