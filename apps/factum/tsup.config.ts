import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { buildWeb } from './scripts/build-web.ts';

// The event log's writer thread is started from `new URL('./writer-thread.js', import.meta.url)`:
// bundled in, its code must sit next to the bundle's chunks, so it is an entry of its own.
const writerThread = fileURLToPath(
  new URL('./node_modules/@factum/event-log/dist/writer-thread.js', import.meta.url),
);

/**
 * One installable package: the workspace packages (`@factum/*`, dev dependencies here)
 * are bundled into `dist`, while the libraries they use stay dependencies that npm
 * installs from the registry (better-sqlite3 builds its native addon there). The web
 * timeline's browser bundle is built after the Node build, whose `clean` would remove it.
 */
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    cli: 'src/cli.ts',
    'writer-thread': writerThread,
  },
  format: ['esm'],
  dts: {
    entry: 'src/index.ts',
    compilerOptions: { customConditions: [] },
  },
  noExternal: [/^@factum\//],
  clean: true,
  sourcemap: true,
  target: 'node20',
  onSuccess: async () => void (await buildWeb()),
});
