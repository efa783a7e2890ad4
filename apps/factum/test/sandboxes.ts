import {
  probeSandbox,
  SANDBOX_BACKENDS,
  type SandboxBackend,
  type ShellIsolation,
} from '../src/builtin-tools/shell-sandbox.ts';

/** A sandbox this machine can make, by the `FACTUM_SANDBOX` name that forces it. */
export type MachineSandbox = { readonly backend: SandboxBackend; readonly isolation: ShellIsolation };

/**
 * Every sandbox this machine can make, found when a test file loads: the sandbox tests
 * run once per entry, so each backend that exists here is tested and none is skipped.
 * Where the list is empty the tests of the path that remains (no shell offered) run.
 */
export const MACHINE_SANDBOXES: readonly MachineSandbox[] = SANDBOX_BACKENDS.flatMap((backend) => {
  const probe = probeSandbox({ ...process.env, FACTUM_SANDBOX: backend });
  return probe.kind === 'found' ? [{ backend, isolation: probe.isolation }] : [];
});
