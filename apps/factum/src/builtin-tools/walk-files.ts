import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Directories a walk steps over: version control, dependencies, Factum's own data. */
export const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set(['.git', 'node_modules', '.factum']);

/** One entry a walk found. */
export type WalkEntry = {
  readonly path: string;
  readonly type: 'file' | 'directory' | 'symlink' | 'other';
};

function typeOf(entry: Dirent): WalkEntry['type'] {
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isDirectory()) return 'directory';
  return entry.isFile() ? 'file' : 'other';
}

/**
 * The entries under a directory, breadth first and sorted by name. Symbolic links
 * are reported but never followed, so a walk cannot leave the directory it started in.
 */
export async function* walkFiles(
  directory: string,
  options: { readonly recursive: boolean; readonly signal?: AbortSignal },
): AsyncGenerator<WalkEntry> {
  const queue: string[] = [directory];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    options.signal?.throwIfAborted();
    const entries = await readdir(next, { withFileTypes: true }).catch(() => []);
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      const path = join(next, entry.name);
      const type = typeOf(entry);
      yield { path, type };
      if (options.recursive && type === 'directory' && !SKIPPED_DIRECTORIES.has(entry.name)) queue.push(path);
    }
  }
}
