import { closeSync, existsSync, fsyncSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { DirectoryFs } from '@factum/event-log';

/**
 * The real filesystem, for the data directory. The log has the same helper
 * (`makeDurableDirectory` in `@factum/event-log`); the app keeps its own because the CLI
 * reaches the data directory before it may load the log (`factum --help` loads none of
 * the runtime). Windows cannot fsync a directory: skipped there.
 */
export const appDirectoryFs: DirectoryFs = {
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
 * Creates `path` and each missing directory above it, one level at a time, fsyncing each
 * new directory's parent, so a power cut never leaves the chain half there. Returns the
 * directories made, top first.
 */
export function makeDurableDirectory(path: string, mode: number, fs: DirectoryFs = appDirectoryFs): string[] {
  const missing: string[] = [];
  for (let at = resolve(path); !fs.exists(at); at = dirname(at)) {
    missing.unshift(at);
    if (dirname(at) === at) break;
  }
  for (const level of missing) {
    fs.mkdir(level, mode);
    fs.fsyncDirectory(dirname(level));
  }
  return missing;
}
