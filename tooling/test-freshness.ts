import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The latest modification time of the files under `path` (0 when there is none): what a
 * test compares with a build's time to know whether the build is older than its sources.
 */
export function newestFile(path: string): number {
  if (!existsSync(path)) return 0;
  let latest = 0;
  for (const entry of readdirSync(path, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) latest = Math.max(latest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return latest;
}
