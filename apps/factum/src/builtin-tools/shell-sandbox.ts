import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, relative, sep } from 'node:path';

/**
 * How the shell tool's commands are isolated:
 * - `bubblewrap`: in a Linux sandbox (own PID, network, IPC and UTS namespaces, the
 *   file system read-only except the workspace, Factum's state and the home directory hidden);
 * - `none`: directly, because the user passed `--unsandboxed-shell`.
 */
export type ShellIsolation =
  | { readonly kind: 'bubblewrap'; readonly executable: string }
  | { readonly kind: 'none' };

/** What a sandboxed command may see and do. */
export type SandboxPolicy = {
  readonly workspace: string;
  /** Paths hidden behind an empty directory (Factum's data directory, its user configuration). */
  readonly hidden: readonly string[];
  /** Leave the network namespace shared (only with `--allow-network`). */
  readonly allowNetwork: boolean;
};

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
 * Finds bubblewrap on `PATH` and checks that it can make a sandbox here (a kernel
 * without unprivileged user namespaces cannot). `undefined` when it cannot: then the
 * shell is not offered unless the user asks for it unsandboxed.
 */
export function findSandbox(env: NodeJS.ProcessEnv = process.env): ShellIsolation | undefined {
  if (process.platform !== 'linux') return undefined;
  const executable = (env.PATH ?? '/usr/bin:/bin')
    .split(delimiter)
    .filter((directory) => isAbsolute(directory))
    .map((directory) => join(directory, 'bwrap'))
    .find((candidate) => existsSync(candidate));
  if (executable === undefined) return undefined;
  const probe = spawnSync(
    executable,
    [...sandboxArguments({ workspace: '/', hidden: [], allowNetwork: false }, env), '/bin/true'],
    { stdio: 'ignore', timeout: 5_000, env: commandEnvironment(env) },
  );
  return probe.status === 0 ? { kind: 'bubblewrap', executable } : undefined;
}

/**
 * The bubblewrap arguments (before the command) for `policy`. Order matters: later
 * mounts cover earlier ones, so the workspace is bound writable over the read-only
 * root and the hidden home, and Factum's state is hidden over the workspace.
 */
export function sandboxArguments(policy: SandboxPolicy, env: NodeJS.ProcessEnv): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  // /run holds sockets (a container daemon, the session bus) that no network namespace closes.
  if (isDirectory('/run')) args.push('--tmpfs', '/run');
  if (policy.allowNetwork && isDirectory('/run/systemd/resolve')) {
    args.push('--ro-bind', '/run/systemd/resolve', '/run/systemd/resolve');
  }
  const home = env.HOME;
  if (home !== undefined && isAbsolute(home) && home !== '/' && isDirectory(home)) {
    // Keys and tokens live in the home directory (~/.ssh, ~/.aws, ~/.netrc, ~/.npmrc): hide it,
    // then give back read-only the tool directories on PATH that live there.
    args.push('--tmpfs', home);
    for (const directory of toolDirectories(env.PATH ?? '', home))
      args.push('--ro-bind', directory, directory);
  }
  args.push('--bind', policy.workspace, policy.workspace);
  for (const path of policy.hidden) {
    if (isDirectory(path)) args.push('--tmpfs', path);
  }
  args.push('--chdir', policy.workspace, '--unshare-all');
  if (policy.allowNetwork) args.push('--share-net');
  // --new-session: no way back to Factum's terminal; --die-with-parent: the sandbox ends with Factum.
  args.push('--die-with-parent', '--new-session', '--');
  return args;
}

/** Directories on PATH under `home`, widened to their prefix when they are a `bin` (its `lib` comes along). */
function toolDirectories(path: string, home: string): string[] {
  const found = new Set<string>();
  for (const entry of path.split(delimiter)) {
    if (!isAbsolute(entry) || !inside(home, entry) || !isDirectory(entry)) continue;
    const prefix = entry.endsWith(`${sep}bin`) ? dirname(entry) : entry;
    found.add(prefix !== home && inside(home, prefix) ? prefix : entry);
  }
  return [...found];
}

function inside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
