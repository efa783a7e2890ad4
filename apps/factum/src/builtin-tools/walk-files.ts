import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import type { OpenedEntry } from './confined-open.js';
import type { Workspace } from './workspace.js';

/** Directories a walk steps over: version control, dependencies, Factum's own data. */
export const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set(['.git', 'node_modules', '.factum']);

/** One entry a walk found. */
export type WalkEntry = {
  readonly path: string;
  readonly type: 'file' | 'directory' | 'symlink' | 'other';
  /** Opens a file entry through its directory's descriptor (only while the walk is at this entry). */
  readonly open: () => Promise<OpenedEntry>;
};

function typeOf(entry: Dirent): WalkEntry['type'] {
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isDirectory()) return 'directory';
  return entry.isFile() ? 'file' : 'other';
}

/**
 * The entries under a workspace directory, breadth first and sorted by name. Each
 * directory is opened beneath the workspace and listed through its descriptor;
 * symbolic links are reported but never followed, and Factum's protected state is
 * neither listed nor entered.
 */
export async function* walkFiles(
  workspace: Workspace,
  path: string,
  options: { readonly recursive: boolean; readonly signal?: AbortSignal },
): AsyncGenerator<WalkEntry> {
  const hidden = await workspace.protectedRealPaths();
  const queue: string[] = [path];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    options.signal?.throwIfAborted();
    let directory: OpenedEntry;
    try {
      directory = await workspace.openDirectory(next);
    } catch (error) {
      // The starting point's refusal is the caller's answer; a subdirectory that changed is skipped.
      if (next === path) throw error;
      continue;
    }
    try {
      const entries = await readdir(workspace.listingPath(directory), { withFileTypes: true }).catch(
        () => [],
      );
      entries.sort((a, b) => a.name.localeCompare(b.name));
      for (const entry of entries) {
        const real = join(directory.real, entry.name);
        if (hidden.some((protectedPath) => within(protectedPath, real))) continue;
        const type = typeOf(entry);
        yield { path: real, type, open: () => workspace.openChild(directory, entry.name, 'file') };
        if (options.recursive && type === 'directory' && !SKIPPED_DIRECTORIES.has(entry.name)) {
          queue.push(workspace.relative(real));
        }
      }
    } finally {
      await directory.handle.close();
    }
  }
}

function within(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}
