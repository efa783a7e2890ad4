import { factumTsup } from '../../tooling/tsup.base.ts';

export default factumTsup(['src/index.ts']);
