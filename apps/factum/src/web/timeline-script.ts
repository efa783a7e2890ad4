import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { FactumError } from '@factum/agent-facts';

// Built from web/*.ts into dist/assets (see scripts/build-web.ts). From the built app this
// module sits in dist/; from sources in src/web/.
const CANDIDATES = ['./assets/timeline.js', '../../dist/assets/timeline.js'];

let cached: string | undefined;

/** The web timeline's browser script, read once from the build output. */
export function timelineScript(): string {
  if (cached !== undefined) return cached;
  for (const candidate of CANDIDATES) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) {
      cached = readFileSync(path, 'utf8');
      return cached;
    }
  }
  throw new FactumError(
    'web_assets_missing',
    'the web timeline is not built: run `pnpm --filter factum build`',
  );
}
