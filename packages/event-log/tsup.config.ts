import { factumTsup } from '../../tooling/tsup.base.ts';

// The writer thread starts in every process that writes: Kysely bundled in loads as
// one file instead of hundreds of modules, and only the digest functions of
// agent-facts come with it (no schema library).
export default factumTsup(['src/index.ts', 'src/testing.ts', 'src/writer-thread.ts'], {
  dtsEntry: ['src/index.ts', 'src/testing.ts'],
  noExternal: ['kysely', '@factum/agent-facts/digest'],
});
