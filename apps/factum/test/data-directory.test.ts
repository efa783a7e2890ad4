import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type DirectoryFs, nodeDirectoryFs } from '@factum/event-log';
import { describe, expect, it } from 'vitest';
import { LOG_FILE, prepareDataDirectory } from '../src/data-directory.ts';

describe('the data directory', () => {
  it('every directory it creates is fsynced into its parent, level by level, and so is the new log file', () => {
    const root = resolve(mkdtempSync(join(tmpdir(), 'factum-data-')));
    try {
      const calls: string[] = [];
      const fs: DirectoryFs = {
        exists: (path) => nodeDirectoryFs.exists(path),
        mkdir: (path, mode) => {
          calls.push(`mkdir ${path}`);
          nodeDirectoryFs.mkdir(path, mode);
        },
        fsyncDirectory: (path) => {
          calls.push(`fsync ${path}`);
          nodeDirectoryFs.fsyncDirectory(path);
        },
      };
      const dataDir = join(root, 'project', '.factum');
      prepareDataDirectory(dataDir, { fs });
      expect(calls).toEqual([
        `mkdir ${join(root, 'project')}`,
        `fsync ${root}`,
        `mkdir ${dataDir}`,
        `fsync ${join(root, 'project')}`,
        `fsync ${dataDir}`,
      ]);
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      expect(statSync(join(dataDir, LOG_FILE)).mode & 0o777).toBe(0o600);
      calls.length = 0;
      prepareDataDirectory(dataDir, { fs });
      expect(calls, 'an existing directory and log need nothing').toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
