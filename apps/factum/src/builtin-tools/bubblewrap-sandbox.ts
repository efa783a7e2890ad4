import { mountSteps, type SandboxPolicy } from './sandbox-mounts.js';

/**
 * The bubblewrap arguments (before the command) for `policy`: the whole root
 * read-only, a fresh `/dev` and `/proc`, then the shared mount steps, every namespace
 * unshared (the network too, unless allowed), no capabilities, a new session and death
 * with Factum.
 */
export function bubblewrapArguments(policy: SandboxPolicy, env: NodeJS.ProcessEnv): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  for (const step of mountSteps(policy, env)) {
    if (step.kind === 'tmpfs') args.push('--tmpfs', step.path);
    else args.push(step.kind === 'bind' ? '--bind' : '--ro-bind', step.path, step.path);
  }
  args.push('--chdir', policy.workspace, '--unshare-all');
  // Started by root, bubblewrap leaves the command root's capabilities (it could unmount what
  // hides the data directory): drop them all. Anyone else gets none already.
  if (process.getuid?.() === 0) args.push('--cap-drop', 'ALL');
  if (policy.allowNetwork) args.push('--share-net');
  // --new-session: no way back to Factum's terminal; --die-with-parent: the sandbox ends with Factum.
  args.push('--die-with-parent', '--new-session', '--');
  return args;
}
