import { factumVitest } from '../../tooling/vitest.base.ts';

const config = factumVitest();
// Node adds `import`/`require` by itself. Passed as a user condition, `import` makes
// externalised CommonJS packages (`pg`) require the ESM build of their dependencies.
const conditions = ['@factum/source', 'node', 'default'];
if (config.resolve) config.resolve.conditions = conditions;
if (config.ssr?.resolve) {
  config.ssr.resolve.conditions = conditions;
  config.ssr.resolve.externalConditions = conditions;
}

export default config;
