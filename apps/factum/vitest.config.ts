import { mergeConfig } from 'vitest/config';
import { factumVitest } from '../../tooling/vitest.base.ts';

export default mergeConfig(factumVitest({ postgres: true }), {
  test: {
    globalSetup: ['test/global-setup.ts'],
    // Most of this suite waits on the CLI processes it starts: two test files at a time
    // keep both cores busy once the other packages' suites are done.
    maxWorkers: 2,
  },
});
