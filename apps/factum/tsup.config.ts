import { factumTsup } from '../../tooling/tsup.base.ts';
import { buildWeb } from './scripts/build-web.ts';

const node = factumTsup(['src/index.ts', 'src/cli.ts'], { dtsEntry: 'src/index.ts' });

// The browser bundle is built after the Node build, whose `clean` would otherwise remove it.
export default { ...node, onSuccess: async () => void (await buildWeb()) };
