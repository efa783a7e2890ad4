import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Options } from 'tsup';

type Plugin = NonNullable<Options['esbuildPlugins']>[number];

const entry = fileURLToPath(new URL('./child/torture-child.js', import.meta.url));

/**
 * Packages the bundle must not contain: native addons and the wasm variant find their
 * binaries next to their own files, and `pg` is never loaded by a child.
 */
const EXTERNAL = /^(better-sqlite3|pg|@jitl\/quickjs-[a-z-]+-wasmfile-[a-z-]+)(\/|$)/;

/**
 * Bundles the torture child and the built packages it imports into one ESM file in
 * `directory`, and returns its path. A child is killed once, so it pays its start-up in
 * full every time: one file instead of hundreds of modules cuts that cost by more than
 * half. Built once per run, from `dist` as the child always ran, so it is never stale.
 */
export async function bundleChild(directory: string): Promise<string> {
  const outDir = join(directory, 'bundle');
  await build({
    entry: { 'torture-child': entry },
    outDir,
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    outExtension: () => ({ js: '.mjs' }),
    // Which packages stay outside is decided by the plugin below, not by package.json.
    noExternal: [/./],
    splitting: false,
    sourcemap: false,
    dts: false,
    config: false,
    silent: true,
    removeNodeProtocol: false,
    // Bundled CommonJS (undici, ajv) calls `require` for Node's own modules.
    banner: {
      js: "import { createRequire as bundleRequire } from 'node:module';const require = bundleRequire(import.meta.url);",
    },
    esbuildPlugins: [keepExternalsInPlace, keepOwnLocation],
  });
  return join(outDir, 'torture-child.mjs');
}

/**
 * Externals and lazily imported chunks are imported by absolute path, resolved from the
 * module that imports them: the bundle lives outside the workspace, where a bare name
 * would not resolve. A workspace package's lazy chunk stays a dynamic import, or esbuild
 * would hoist the chunk's static imports (`pg`) to the top of the bundle and load them in
 * every child; third-party lazy chunks are inlined so their classes stay one copy.
 */
const keepExternalsInPlace: Plugin = {
  name: 'keep-externals-in-place',
  setup(builder) {
    builder.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === 'resolving' || args.kind === 'entry-point') return undefined;
      const lazyChunk = args.kind === 'dynamic-import' && !args.importer.includes('/node_modules/');
      const external = EXTERNAL.test(args.path) || lazyChunk;
      if (!external) return undefined;
      const resolved = await builder.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: 'resolving',
      });
      if (resolved.errors.length > 0) return { errors: resolved.errors };
      return { path: resolved.path, external: true };
    });
  },
};

/**
 * A bundled module that finds files relative to itself (`createRequire(import.meta.url)`
 * in code-runtime, for the wasm binary) keeps the URL of its own file in `dist`.
 */
const keepOwnLocation: Plugin = {
  name: 'keep-own-location',
  setup(builder) {
    builder.onLoad({ filter: /\.[cm]?js$/ }, (args) => {
      const contents = readFileSync(args.path, 'utf8');
      if (!contents.includes('import.meta.url')) return undefined;
      const url = JSON.stringify(pathToFileURL(args.path).href);
      return { contents: contents.replaceAll('import.meta.url', url), loader: 'js' };
    });
  },
};
