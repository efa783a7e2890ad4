import { mergeConfig } from 'vitest/config';
import { factumVitest } from '../../tooling/vitest.base.ts';

export default mergeConfig(factumVitest(), { test: { globalSetup: ['test/global-setup.ts'] } });
