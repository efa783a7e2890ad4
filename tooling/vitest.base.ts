import { defineConfig } from 'vitest/config';

/**
 * Shared vitest settings. Workspace packages resolve to their TypeScript sources
 * through the `@factum/source` export condition, so a test never runs against a
 * stale build of a sibling. `postgres: true` for suites that run on PostgreSQL too.
 */
export function factumVitest(options: { testTimeout?: number; postgres?: boolean } = {}) {
  // Node adds `import`/`require` by itself. Passed as a user condition, `import` makes
  // externalised CommonJS packages (`pg`) require the ESM build of their dependencies.
  const conditions = ['@factum/source', 'node', 'default'];
  return defineConfig({
    resolve: { conditions },
    ssr: { resolve: { conditions, externalConditions: conditions } },
    test: {
      include: ['test/**/*.test.ts'],
      setupFiles: [new URL('./vitest.setup.ts', import.meta.url).pathname],
      // Suites that run on PostgreSQL too get a real server even on a fresh machine:
      // the shared embedded one, unless FACTUM_TEST_POSTGRES_URL names another.
      ...(options.postgres
        ? { globalSetup: [new URL('./test-postgres/global-setup.mjs', import.meta.url).pathname] }
        : {}),
      testTimeout: options.testTimeout ?? 20_000,
      hookTimeout: 20_000,
      pool: 'forks',
      // A worker runs its files one after another in one module graph, instead of
      // importing every package's sources again for each file: the suites' imports cost
      // about a tenth of their CPU (the engine's 32 s of 276 on 2 cores). Tests keep no
      // state between files beyond what a process shares anyway (the writer thread).
      isolate: false,
      // The JSON report feeds the one-line summary the root test command prints.
      reporters: ['default', ['json', { outputFile: 'test-results/vitest.json' }]],
    },
  });
}
