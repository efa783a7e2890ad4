import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * Builds the web timeline's browser code (`web/*.ts`) into one classic script,
 * `dist/assets/timeline.js`, which the server's `/assets/timeline.js` route serves. The
 * fact types come from `@factum/agent-facts` sources, so a renamed field fails here.
 */
export async function buildWeb(): Promise<string> {
  const outfile = `${root}dist/assets/timeline.js`;
  await build({
    absWorkingDir: root,
    entryPoints: ['web/main.ts'],
    outfile,
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    conditions: ['@factum/source'],
    sourcemap: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  return outfile;
}
