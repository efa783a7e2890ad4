import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { bubblewrapArguments } from './bubblewrap-sandbox.js';
import { findExecutable, type SandboxPolicy } from './sandbox-mounts.js';
import { type UnsharePrograms, unshareCommand } from './unshare-sandbox.js';

export type { SandboxPolicy } from './sandbox-mounts.js';

/**
 * How the shell tool's commands are isolated:
 * - `bubblewrap`: in bubblewrap's sandbox (own user, PID, network, IPC and UTS
 *   namespaces, the file system read-only except the workspace, Factum's state and the
 *   home directory hidden);
 * - `unshare`: the same sandbox built from util-linux (`unshare`, `setpriv`, `setsid`,
 *   `mount`), where bubblewrap is not installed;
 * - `none`: directly, because the user passed `--unsandboxed-shell`.
 */
export type ShellIsolation =
  | { readonly kind: 'bubblewrap'; readonly executable: string }
  | { readonly kind: 'unshare'; readonly programs: UnsharePrograms }
  | { readonly kind: 'none' };

/** The sandboxes `FACTUM_SANDBOX` can force, by the name it takes. */
export const SANDBOX_BACKENDS = ['bwrap', 'unshare'] as const;

/** A sandbox `FACTUM_SANDBOX` can name. */
export type SandboxBackend = (typeof SANDBOX_BACKENDS)[number];

/** What looking for a sandbox found: one, or the reason there is none (one sentence). */
export type SandboxProbe =
  | { readonly kind: 'found'; readonly isolation: Exclude<ShellIsolation, { kind: 'none' }> }
  | { readonly kind: 'unavailable'; readonly reason: string };

/** Environment variables a command gets, by name: an allow-list, so no secret passes by accident. */
export const COMMAND_ENVIRONMENT: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'LC_COLLATE',
  'LC_MESSAGES',
  'LC_NUMERIC',
  'LC_TIME',
  'TZ',
];

/** The environment of a command: only the allow-listed variables, and a plain shell's TERM. */
export function commandEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const kept: Record<string, string> = { TERM: 'dumb' };
  for (const name of COMMAND_ENVIRONMENT) {
    const value = env[name];
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}

/**
 * Looks for a sandbox that works here, by running `true` in it: bubblewrap on `PATH`
 * first, then util-linux's `unshare`. `FACTUM_SANDBOX=bwrap|unshare` looks for that one
 * only, `FACTUM_SANDBOX=none` for none (as on a machine that has neither). Where none
 * works, the reason says why in one sentence (no user namespaces, AppArmor's limit on
 * them, the programs missing).
 */
export function probeSandbox(env: NodeJS.ProcessEnv = process.env): SandboxProbe {
  const forced = env.FACTUM_SANDBOX ?? '';
  if (process.platform !== 'linux') return unavailable('the shell sandbox needs Linux');
  if (forced === 'none') return unavailable('FACTUM_SANDBOX=none turns the sandbox off');
  if (forced !== '' && !(SANDBOX_BACKENDS as readonly string[]).includes(forced)) {
    return unavailable(`FACTUM_SANDBOX must be bwrap, unshare or none, not ${JSON.stringify(forced)}`);
  }
  const reasons: string[] = [];
  for (const backend of SANDBOX_BACKENDS) {
    if (forced !== '' && forced !== backend) continue;
    const found = backend === 'bwrap' ? bubblewrap(env) : unshare(env);
    if (found.kind === 'found') return found;
    reasons.push(found.reason);
  }
  const limit = userNamespaceLimit();
  return unavailable(limit === undefined ? reasons.join('; ') : `${reasons.join('; ')}: ${limit}`);
}

/** The sandbox `probeSandbox` finds, or `undefined` where none works. */
export function findSandbox(env: NodeJS.ProcessEnv = process.env): ShellIsolation | undefined {
  const probe = probeSandbox(env);
  return probe.kind === 'found' ? probe.isolation : undefined;
}

/** The program and arguments that run `command` (an argument vector) isolated as `isolation` says. */
export function sandboxCommand(
  isolation: ShellIsolation,
  policy: SandboxPolicy,
  command: readonly string[],
  env: NodeJS.ProcessEnv,
): [string, string[]] {
  switch (isolation.kind) {
    case 'bubblewrap':
      return [isolation.executable, [...bubblewrapArguments(policy, env), ...command]];
    case 'unshare': {
      const [file, args] = unshareCommand(isolation.programs, policy, env);
      return [file, [...args, ...command]];
    }
    case 'none':
      return [command[0]!, command.slice(1)];
    default:
      return isolation satisfies never;
  }
}

function bubblewrap(env: NodeJS.ProcessEnv): SandboxProbe {
  const executable = findExecutable('bwrap', env, true);
  if (executable === undefined) return unavailable('bwrap is not on PATH');
  const isolation = { kind: 'bubblewrap', executable } as const;
  return works(isolation, env) ? { kind: 'found', isolation } : unavailable('bwrap cannot make a sandbox');
}

function unshare(env: NodeJS.ProcessEnv): SandboxProbe {
  const unshare = findExecutable('unshare', env);
  const setpriv = findExecutable('setpriv', env);
  const setsid = findExecutable('setsid', env);
  if (unshare === undefined || setpriv === undefined || setsid === undefined) {
    return unavailable("util-linux's unshare, setpriv or setsid is missing");
  }
  const isolation = { kind: 'unshare', programs: { unshare, setpriv, setsid } } as const;
  return works(isolation, env) ? { kind: 'found', isolation } : unavailable('unshare cannot make a sandbox');
}

/** Whether `true` runs in the sandbox: a kernel without user namespaces fails here, not later. */
function works(isolation: ShellIsolation, env: NodeJS.ProcessEnv): boolean {
  const policy = { workspace: tmpdir(), hidden: [], allowNetwork: false };
  const [file, args] = sandboxCommand(isolation, policy, ['/bin/true'], commandEnvironment(env));
  const probe = spawnSync(file, args, { stdio: 'ignore', timeout: 5_000, env: commandEnvironment(env) });
  return probe.status === 0;
}

/** Why unprivileged user namespaces cannot be made here, when the kernel says so. */
function userNamespaceLimit(): string | undefined {
  const root = process.getuid?.() === 0;
  if (read('/proc/sys/user/max_user_namespaces') === '0') {
    return 'user namespaces are off (user.max_user_namespaces = 0)';
  }
  if (!root && read('/proc/sys/kernel/unprivileged_userns_clone') === '0') {
    return 'unprivileged user namespaces are off (kernel.unprivileged_userns_clone = 0)';
  }
  if (!root && read('/proc/sys/kernel/apparmor_restrict_unprivileged_userns') === '1') {
    return 'AppArmor restricts unprivileged user namespaces here (kernel.apparmor_restrict_unprivileged_userns = 1)';
  }
  return undefined;
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

function unavailable(reason: string): SandboxProbe {
  return { kind: 'unavailable', reason };
}
