import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { alive } from './state-lock.mjs';

/** How old a data directory without a `postmaster.pid` must be to count as left behind. */
export const STALE_AFTER_MS = 10 * 60_000;

/**
 * Removes the data directories beside `own` (same name up to its `-<pid>-<time>` end) of
 * servers that were killed before they could remove their own (SIGKILL, or the end of a
 * CI job that takes every process with it): 50–60 MB each, one per killed run. A
 * directory is stale when the postmaster its `postmaster.pid` names is not running, or,
 * without that file, once it is `STALE_AFTER_MS` old (initdb is filling a younger one
 * right now, for another server). Returns the names it removed.
 */
export function sweepStaleDataDirs(own, now = Date.now()) {
  const prefix = basename(own).replace(/-\d+-\d+$/, '-');
  const parent = dirname(own);
  const removed = [];
  for (const name of readdirSync(parent)) {
    const path = join(parent, name);
    if (!name.startsWith(prefix) || path === own) continue;
    try {
      const pidFile = join(path, 'postmaster.pid');
      if (existsSync(pidFile)) {
        if (alive(Number(readFileSync(pidFile, 'utf8').split('\n')[0]))) continue;
      } else if (now - statSync(path).mtimeMs < STALE_AFTER_MS) continue;
      rmSync(path, { recursive: true, force: true });
      removed.push(name);
    } catch {
      // Removed meanwhile by another server's sweep, or not ours to read: left as it is.
    }
  }
  return removed;
}
