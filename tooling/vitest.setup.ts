import fc from 'fast-check';

// In CI, property tests replay one fixed seed, so a run is reproducible and a red
// build always points at the same counterexample; locally every run explores afresh.
// FACTUM_PROPERTY_SEED overrides both (to replay a failure seen elsewhere).
const seed = process.env.FACTUM_PROPERTY_SEED ?? (process.env.CI ? '20261130' : undefined);
if (seed !== undefined) fc.configureGlobal({ seed: Number(seed) });
