import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { STALE_AFTER_MS, sweepStaleDataDirs } from '../../test-postgres/stale-data-dirs.mjs';

// The test PostgreSQL's start-up sweep (tooling/test-postgres/server.mjs), on directories
// made here: a killed server leaves its data directory behind, the next start removes it.
const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString('utf8'));
}

function dataDir(root: string, name: string, postmaster?: number): string {
  const path = join(root, name);
  mkdirSync(path);
  writeFileSync(join(path, 'PG_VERSION'), '18\n');
  if (postmaster !== undefined) writeFileSync(join(path, 'postmaster.pid'), `${postmaster}\n${path}\n`);
  return path;
}

describe('sweeping the data directories of killed test servers', () => {
  it('removes those whose postmaster is gone and old ones without one, and keeps the live, the young and the unrelated', () => {
    const root = mkdtempSync(join(tmpdir(), 'factum-sweep-'));
    roots.push(root);
    const own = dataDir(root, 'factum-test-pgdata-100-1000');
    const killed = dataDir(root, 'factum-test-pgdata-101-1001', deadPid());
    const live = dataDir(root, 'factum-test-pgdata-102-1002', process.pid);
    const young = dataDir(root, 'factum-test-pgdata-103-1003');
    const old = dataDir(root, 'factum-test-pgdata-104-1004');
    const past = new Date(Date.now() - STALE_AFTER_MS - 60_000);
    utimesSync(old, past, past);
    const unrelated = dataDir(root, 'factum-other-105-1005', deadPid());

    const removed = sweepStaleDataDirs(own);

    expect(removed.sort()).toEqual(['factum-test-pgdata-101-1001', 'factum-test-pgdata-104-1004']);
    expect([killed, old].map((path) => existsSync(path))).toEqual([false, false]);
    expect([own, live, young, unrelated].map((path) => existsSync(path))).toEqual([true, true, true, true]);
  });
});
