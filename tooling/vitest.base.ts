import { defineConfig } from 'vitest/config';

/**
 * Shared vitest settings. Workspace packages resolve to their TypeScript sources
 * through the `@factum/source` export condition, so a test never runs against a
 * stale build of a sibling.
 */
export function factumVitest(options: { testTimeout?: number } = {}) {
  const conditions = ['@factum/source', 'node', 'import', 'default'];
  return defineConfig({
    resolve: { conditions },
    ssr: { resolve: { conditions, externalConditions: conditions } },
    test: {
      include: ['test/**/*.test.ts'],
      testTimeout: options.testTimeout ?? 20_000,
      hookTimeout: 20_000,
      pool: 'forks',
    },
  });
}
