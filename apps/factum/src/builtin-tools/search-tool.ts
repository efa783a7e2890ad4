import { readFile, stat } from 'node:fs/promises';
import { RecoveryPolicy, type ToolRegistration } from '@factum/tools';
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { walkFiles } from './walk-files.js';
import type { Workspace } from './workspace.js';

/** Files larger than this are not searched (they are rarely source, and cost memory). */
export const SEARCH_FILE_LIMIT_BYTES = 1024 * 1024;
/** Matches `search` returns at most. */
export const SEARCH_RESULT_LIMIT = 200;
const LINE_PREVIEW = 200;

const SearchInput = z.strictObject({
  query: z.string().min(1).describe('plain text to look for (not a regular expression)'),
  path: z.string().min(1).default('.').describe('a directory or file relative to the workspace root'),
  caseSensitive: z.boolean().default(false),
  maxResults: z.number().int().positive().max(SEARCH_RESULT_LIMIT).default(50),
});

/**
 * `search`: plain-text search over the workspace's text files, line by line, with a
 * bounded number of matches. Binary and very large files are skipped.
 */
export function searchTool(workspace: Workspace): ToolRegistration {
  return defineTool({
    name: 'search',
    description: 'Search the text files of the workspace for a plain-text query; returns matching lines.',
    input: SearchInput,
    nesting: 'nestable',
    semantics: 'parallel',
    recovery: RecoveryPolicy.idempotent(),
    run: async ({ query, path, caseSensitive, maxResults }, signal) => {
      const real = await workspace.existing(path);
      const needle = caseSensitive ? query : query.toLowerCase();
      const matches: { path: string; line: number; text: string }[] = [];
      let filesSearched = 0;
      const files = (await stat(real)).isFile() ? [real] : walkFiles(real, { recursive: true, signal });
      for await (const entry of files) {
        const file = typeof entry === 'string' ? entry : entry.type === 'file' ? entry.path : undefined;
        if (file === undefined) continue;
        const lines = await textLines(file);
        if (lines === undefined) continue;
        filesSearched += 1;
        for (const [index, line] of lines.entries()) {
          if (!(caseSensitive ? line : line.toLowerCase()).includes(needle)) continue;
          if (matches.length === maxResults) return { query, matches, filesSearched, truncated: true };
          matches.push({
            path: workspace.relative(file),
            line: index + 1,
            text: line.slice(0, LINE_PREVIEW),
          });
        }
      }
      return { query, matches, filesSearched, truncated: false };
    },
  });
}

async function textLines(file: string): Promise<string[] | undefined> {
  const info = await stat(file).catch(() => undefined);
  if (info === undefined || !info.isFile() || info.size > SEARCH_FILE_LIMIT_BYTES) return undefined;
  const bytes = await readFile(file).catch(() => undefined);
  if (bytes === undefined || bytes.includes(0)) return undefined;
  return bytes.toString('utf8').split(/\r?\n/);
}
