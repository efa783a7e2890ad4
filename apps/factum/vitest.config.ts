import { mergeConfig } from 'vitest/config';
import { factumVitest } from '../../tooling/vitest.base.ts';

export default mergeConfig(factumVitest({ postgres: true }), {
  // Two files at a time (vitest's default is one on 2 cores): most of these tests wait
  // on child processes, leases and loopback servers, not on the CPU.
  test: { globalSetup: ['test/global-setup.ts'], maxWorkers: 2 },
});
