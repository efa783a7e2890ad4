import { resolve } from 'node:path';
import { RecoveryPolicy, type ToolRegistration } from '@factum/tools';
import { z } from 'zod';
import type { OpenedEntry } from './confined-open.js';
import { defineTool } from './define-tool.js';
import { type WalkEntry, walkFiles } from './walk-files.js';
import type { Workspace } from './workspace.js';
import { WorkspaceError } from './workspace-error.js';

/** Files larger than this are not searched (they are rarely source, and cost memory). */
export const SEARCH_FILE_LIMIT_BYTES = 1024 * 1024;
/** Matches `search` returns at most. */
export const SEARCH_RESULT_LIMIT = 200;
/** How much one search may look at before it stops and says so. */
export const SEARCH_BOUNDS = { files: 5_000, bytes: 64 * 1024 * 1024, timeMs: 10_000 } as const;
const LINE_PREVIEW = 200;

const SearchInput = z.strictObject({
  query: z.string().min(1).describe('plain text to look for (not a regular expression)'),
  path: z.string().min(1).default('.').describe('a directory or file relative to the workspace root'),
  caseSensitive: z.boolean().default(false),
  maxResults: z.number().int().positive().max(SEARCH_RESULT_LIMIT).default(50),
});

type Match = { path: string; line: number; text: string };
/** Why a search stopped early: enough matches, or one of its bounds. */
type StoppedBy = 'results' | 'files' | 'bytes' | 'time';

/**
 * `search`: plain-text search over the workspace's text files, line by line. It is
 * bounded in matches, files, bytes read and time, and says which bound stopped it;
 * binary and very large files are skipped.
 */
export function searchTool(workspace: Workspace): ToolRegistration {
  return defineTool({
    name: 'search',
    description: `Search the text files of the workspace for a plain-text query; returns matching lines (at most ${SEARCH_BOUNDS.files} files, ${SEARCH_BOUNDS.timeMs / 1000} s).`,
    input: SearchInput,
    nesting: 'nestable',
    semantics: 'parallel',
    readOnly: true,
    recovery: RecoveryPolicy.idempotent(),
    run: async ({ query, path, caseSensitive, maxResults }, signal) => {
      const needle = caseSensitive ? query : query.toLowerCase();
      const matches: Match[] = [];
      const deadline = Date.now() + SEARCH_BOUNDS.timeMs;
      let filesSearched = 0;
      let bytesRead = 0;
      const stop = (stoppedBy: StoppedBy) => ({ query, matches, filesSearched, truncated: true, stoppedBy });
      for await (const entry of entriesOf(workspace, path, signal)) {
        if (entry.type !== 'file') continue;
        if (filesSearched === SEARCH_BOUNDS.files) return stop('files');
        if (bytesRead >= SEARCH_BOUNDS.bytes) return stop('bytes');
        if (Date.now() > deadline) return stop('time');
        const text = await textOf(entry);
        if (text === undefined) continue;
        filesSearched += 1;
        bytesRead += text.bytes;
        for (const [index, line] of text.lines.entries()) {
          if (!(caseSensitive ? line : line.toLowerCase()).includes(needle)) continue;
          if (matches.length === maxResults) return stop('results');
          matches.push({
            path: workspace.relative(entry.path),
            line: index + 1,
            text: line.slice(0, LINE_PREVIEW),
          });
        }
      }
      return { query, matches, filesSearched, truncated: false };
    },
  });
}

/** The files to search: the path itself when it is a file, else a walk beneath it. */
async function* entriesOf(
  workspace: Workspace,
  path: string,
  signal: AbortSignal,
): AsyncGenerator<WalkEntry> {
  let file: OpenedEntry | undefined;
  try {
    file = await workspace.openFile(path);
  } catch (error) {
    if (!WorkspaceError.isInstance(error) || error.code !== 'not_a_file') throw error;
  }
  if (file === undefined) {
    yield* walkFiles(workspace, path, { recursive: true, signal });
    return;
  }
  const opened = file;
  yield { path: resolve(workspace.root, opened.real), type: 'file', open: async () => opened };
}

async function textOf(entry: WalkEntry): Promise<{ lines: string[]; bytes: number } | undefined> {
  const opened = await entry.open().catch(() => undefined);
  if (opened === undefined) return undefined;
  try {
    if (opened.stats.size > SEARCH_FILE_LIMIT_BYTES) return undefined;
    const buffer = Buffer.alloc(opened.stats.size);
    const { bytesRead } = await opened.handle.read(buffer, 0, buffer.length, 0);
    const bytes = buffer.subarray(0, bytesRead);
    if (bytes.includes(0)) return undefined;
    return { lines: bytes.toString('utf8').split(/\r?\n/), bytes: bytes.length };
  } finally {
    await opened.handle.close();
  }
}
