import { factumVitest } from '../../tooling/vitest.base.ts';

export default factumVitest({ postgres: true });
