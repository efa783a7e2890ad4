import { defineConfig } from 'tsup';

/**
 * The build every package shares: ESM with declarations for Node 20. Declarations
 * resolve siblings through their published types (no `@factum/source` condition), so
 * a package's d.ts never points into another package's sources. `noExternal` bundles
 * the named dependencies in (for code that must start fast, like a worker thread).
 */
export function factumTsup(
  entry: string[],
  options: { dtsEntry?: string | string[]; noExternal?: string[] } = {},
) {
  return defineConfig({
    entry,
    format: ['esm'],
    dts: {
      ...(options.dtsEntry === undefined ? {} : { entry: options.dtsEntry }),
      compilerOptions: { customConditions: [] },
    },
    clean: true,
    sourcemap: true,
    target: 'node20',
    ...(options.noExternal === undefined ? {} : { noExternal: options.noExternal }),
  });
}
