import { closeSync, existsSync, fsyncSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * The few filesystem calls a durable directory needs: small, so a test can stand in a
 * disk that loses every directory entry not yet fsynced into its parent.
 */
export interface DirectoryFs {
  exists(path: string): boolean;
  /** Creates one directory (its parent exists); one that exists already is no error. */
  mkdir(path: string, mode: number): void;
  /** Makes the entries of directory `path` durable (fsync of the directory itself). */
  fsyncDirectory(path: string): void;
}

/** The real filesystem. Windows cannot fsync a directory, and needs not: skipped there. */
export const nodeDirectoryFs: DirectoryFs = {
  exists: (path) => existsSync(path),
  mkdir(path, mode) {
    try {
      mkdirSync(path, { mode });
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
    }
  },
  fsyncDirectory(path) {
    if (process.platform === 'win32') return;
    const fd = openSync(path, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  },
};

/**
 * Creates `path` and each missing directory above it, one level at a time, fsyncing
 * each new directory's parent once it exists — so after a power cut the whole chain is
 * there, not a directory whose entry in its parent was never written (`mkdir -p`
 * alone leaves exactly that on a filesystem without ordered metadata). Returns the
 * directories it created, top first; none when `path` existed.
 */
export function makeDurableDirectory(
  path: string,
  options: { readonly mode?: number; readonly fs?: DirectoryFs } = {},
): string[] {
  const fs = options.fs ?? nodeDirectoryFs;
  const missing: string[] = [];
  for (let at = resolve(path); !fs.exists(at); at = dirname(at)) {
    missing.unshift(at);
    if (dirname(at) === at) break;
  }
  for (const level of missing) {
    fs.mkdir(level, options.mode ?? 0o777);
    fs.fsyncDirectory(dirname(level));
  }
  return missing;
}

/** Makes a file just created in `directory` durable there: fsyncs the directory. */
export function syncNewEntry(directory: string, fs: DirectoryFs = nodeDirectoryFs): void {
  fs.fsyncDirectory(resolve(directory));
}
