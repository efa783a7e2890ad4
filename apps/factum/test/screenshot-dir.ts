import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where a browser test writes its screenshots: `FACTUM_SCREENSHOT_DIR`, kept for a person
 * to look at; otherwise a temporary directory that `dispose` removes, so that a run of
 * the suite leaves nothing behind (the screenshots are still taken: taking one proves the
 * page rendered).
 */
export function screenshotDir(): { readonly path: string; readonly kept: boolean; dispose(): void } {
  const kept = process.env.FACTUM_SCREENSHOT_DIR;
  if (kept !== undefined) return { path: kept, kept: true, dispose: () => {} };
  const path = mkdtempSync(join(tmpdir(), 'factum-screens-'));
  return { path, kept: false, dispose: () => rmSync(path, { recursive: true, force: true }) };
}
