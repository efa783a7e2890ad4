import { existsSync, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, relative, sep } from 'node:path';

/** What a sandboxed command may see and do. */
export type SandboxPolicy = {
  readonly workspace: string;
  /** Paths hidden behind an empty directory (Factum's data directory, its user configuration). */
  readonly hidden: readonly string[];
  /** Leave the network namespace shared (only with `--allow-network`). */
  readonly allowNetwork: boolean;
};

/**
 * One step of building the sandbox's file system, on top of a read-only view of the
 * whole root with a fresh `/dev` and `/proc`: an empty directory (`tmpfs`), a directory
 * of the host shown read-only (`ro-bind`) or writable (`bind`) at the same path.
 */
export type MountStep = { readonly kind: 'tmpfs' | 'ro-bind' | 'bind'; readonly path: string };

/**
 * The steps both sandboxes take for `policy`, in order. Order matters: later mounts
 * cover earlier ones, so the workspace is bound writable over the read-only root and
 * the hidden home, and Factum's state is hidden over the workspace.
 */
export function mountSteps(policy: SandboxPolicy, env: NodeJS.ProcessEnv): MountStep[] {
  const steps: MountStep[] = [{ kind: 'tmpfs', path: '/tmp' }];
  // /run holds sockets (a container daemon, the session bus) that no network namespace closes.
  if (isDirectory('/run')) steps.push({ kind: 'tmpfs', path: '/run' });
  if (policy.allowNetwork && isDirectory('/run/systemd/resolve')) {
    steps.push({ kind: 'ro-bind', path: '/run/systemd/resolve' });
  }
  const home = env.HOME;
  if (home !== undefined && isAbsolute(home) && home !== '/' && isDirectory(home)) {
    // Keys and tokens live in the home directory (~/.ssh, ~/.aws, ~/.netrc, ~/.npmrc): hide it,
    // then give back read-only the tool directories on PATH that live there.
    steps.push({ kind: 'tmpfs', path: home });
    for (const path of toolDirectories(env.PATH ?? '', home)) steps.push({ kind: 'ro-bind', path });
  }
  steps.push({ kind: 'bind', path: policy.workspace });
  for (const path of policy.hidden) {
    if (isDirectory(path)) steps.push({ kind: 'tmpfs', path });
  }
  return steps;
}

/**
 * `name` as a file in a directory of `PATH` (default `/usr/bin:/bin`), then — unless
 * `pathOnly` — in the system's directories, where `sbin` may be off a user's `PATH`.
 */
export function findExecutable(name: string, env: NodeJS.ProcessEnv, pathOnly = false): string | undefined {
  const system = pathOnly ? [] : ['/usr/local/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin'];
  const directories = [...(env.PATH ?? '/usr/bin:/bin').split(delimiter), ...system];
  return directories
    .filter((directory) => isAbsolute(directory))
    .map((directory) => join(directory, name))
    .find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
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

/** Whether `path` is a directory (following links). */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
