import { renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build, type Options } from 'tsup';

/**
 * Bundles test scripts (children the tests start) into ESM files that plain `node` runs,
 * `<outDir>/<name>.mjs` for each entry: a loader that compiles TypeScript costs a child
 * several times its whole start-up. `options` says what stays outside the bundle and how
 * the rest resolves. Each process builds in a directory of its own and moves the files in
 * place, so a test worker never starts a child from a file another worker is writing.
 */
export async function bundleTestScripts(
  entry: Record<string, string>,
  outDir: string,
  options: Pick<Options, 'external' | 'noExternal' | 'esbuildOptions' | 'banner'>,
): Promise<void> {
  const staging = join(outDir, `.${process.pid}`);
  await build({
    entry,
    outDir: staging,
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    outExtension: () => ({ js: '.mjs' }),
    splitting: false,
    sourcemap: false,
    dts: false,
    config: false,
    silent: true,
    clean: false,
    ...options,
  });
  for (const name of Object.keys(entry))
    renameSync(join(staging, `${name}.mjs`), join(outDir, `${name}.mjs`));
  rmSync(staging, { recursive: true, force: true });
}
