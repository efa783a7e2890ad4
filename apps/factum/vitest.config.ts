import { mergeConfig } from 'vitest/config';
import { factumVitest } from '../../tooling/vitest.base.ts';

export default mergeConfig(factumVitest({ postgres: true }), {
  test: { globalSetup: ['test/global-setup.ts'] },
});
