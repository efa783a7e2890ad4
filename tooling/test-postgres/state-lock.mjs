import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Whether a process with this id is running. */
export function alive(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * Runs `work` holding the state directory's lock: a directory made atomically by
 * `mkdir`, holding its owner's pid. A lock whose owner died is taken over.
 */
export async function withStateLock(stateDir, work) {
  mkdirSync(stateDir, { recursive: true });
  const lock = join(stateDir, 'lock');
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'owner'), String(process.pid));
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      let owner = 0;
      try {
        owner = Number(readFileSync(join(lock, 'owner'), 'utf8'));
      } catch {
        // The owner is between mkdir and writing its pid: wait for it.
      }
      // An owner that died, or one that never wrote its pid (killed right after mkdir).
      const orphaned = owner === 0 && Date.now() - madeAt(lock) > 10_000;
      if ((owner > 0 && !alive(owner)) || orphaned) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`the test PostgreSQL lock ${lock} is held by ${owner}`);
      else await sleep(50);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function madeAt(lock) {
  try {
    return statSync(lock).mtimeMs;
  } catch {
    return Date.now();
  }
}
