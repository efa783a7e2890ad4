import { factumVitest } from '../vitest.base.ts';

// The smoke run spawns and kills child processes: give it room beyond the default.
export default factumVitest({ testTimeout: 120_000, postgres: true });
