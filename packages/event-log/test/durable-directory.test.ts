import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type DirectoryFs, EventLog, makeDurableDirectory, nodeDirectoryFs } from '../src/index.ts';

/**
 * A disk under strict POSIX rules: a directory's entry is durable only once its parent
 * was fsynced after the entry was made. `powerCut()` drops every entry that is not, with
 * all beneath it.
 */
class StrictDisk implements DirectoryFs {
  /** Each directory and whether its entry in its parent is durable. */
  readonly #entries = new Map<string, boolean>();
  readonly fsyncs: string[] = [];

  constructor(existing: readonly string[]) {
    for (const path of existing) this.#entries.set(path, true);
  }

  exists(path: string): boolean {
    return this.#entries.has(path);
  }

  mkdir(path: string): void {
    if (!this.#entries.has(dirname(path)))
      throw Object.assign(new Error(`ENOENT ${path}`), { code: 'ENOENT' });
    if (!this.#entries.has(path)) this.#entries.set(path, false);
  }

  fsyncDirectory(path: string): void {
    if (!this.#entries.has(path)) throw new Error(`ENOENT ${path}`);
    this.fsyncs.push(path);
    for (const entry of this.#entries.keys()) if (dirname(entry) === path) this.#entries.set(entry, true);
  }

  powerCut(): void {
    const lost = [...this.#entries].filter(([, durable]) => !durable).map(([path]) => path);
    for (const path of [...this.#entries.keys()]) {
      if (lost.some((gone) => path === gone || path.startsWith(`${gone}/`))) this.#entries.delete(path);
    }
  }
}

describe('directories the log creates survive a power cut', () => {
  it('on a disk that loses unsynced directory entries, every level made survives the cut', () => {
    const disk = new StrictDisk(['/', '/home', '/home/user']);
    const made = makeDurableDirectory('/home/user/project/.factum/logs', { fs: disk });
    expect(made).toEqual([
      '/home/user/project',
      '/home/user/project/.factum',
      '/home/user/project/.factum/logs',
    ]);
    disk.powerCut();
    for (const level of made) expect(disk.exists(level), level).toBe(true);
    expect(disk.fsyncs).toEqual(['/home/user', '/home/user/project', '/home/user/project/.factum']);
  });

  it('the same disk loses a chain made without fsyncing each parent (the fake can fail)', () => {
    const disk = new StrictDisk(['/', '/home']);
    disk.mkdir('/home/project');
    disk.mkdir('/home/project/.factum');
    disk.fsyncDirectory('/home/project');
    disk.powerCut();
    expect(disk.exists('/home/project/.factum')).toBe(false);
    expect(disk.exists('/home/project')).toBe(false);
  });

  it('an existing directory is left alone: nothing made, nothing fsynced', () => {
    const disk = new StrictDisk(['/', '/data']);
    expect(makeDurableDirectory('/data', { fs: disk })).toEqual([]);
    expect(disk.fsyncs).toEqual([]);
  });

  it('on the real filesystem each new level is made and its parent fsynced, and the log and the log file are created that way', async () => {
    const root = mkdtempSync(join(tmpdir(), 'factum-durable-'));
    try {
      const calls: string[] = [];
      const recording: DirectoryFs = {
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
      const target = join(root, 'a', 'b');
      makeDurableDirectory(target, { fs: recording, mode: 0o700 });
      expect(calls).toEqual([
        `mkdir ${join(root, 'a')}`,
        `fsync ${root}`,
        `mkdir ${target}`,
        `fsync ${join(root, 'a')}`,
      ]);
      expect(statSync(target).mode & 0o777).toBe(0o700);
      const file = join(root, 'x', 'y', 'events.sqlite');
      const log = await EventLog.open(file);
      await log.close();
      expect(existsSync(file)).toBe(true);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
