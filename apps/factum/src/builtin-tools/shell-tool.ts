import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { RecoveryPolicy, type ToolRegistration } from '@factum/tools';
import { z } from 'zod';
import { BoundedOutput } from './bounded-output.js';
import type { CommandProcesses } from './command-processes.js';
import { defineTool } from './define-tool.js';
import {
  commandEnvironment,
  type SandboxPolicy,
  type ShellIsolation,
  sandboxCommand,
} from './shell-sandbox.js';
import type { Workspace } from './workspace.js';

/** Output kept per stream (stdout, stderr). */
export const SHELL_OUTPUT_LIMIT_BYTES = 64 * 1024;
/** How long a command may run unless the call asks for less. */
export const SHELL_TIMEOUT_MS = 30_000;
/** How long a command has to finish after SIGTERM before it is killed. */
export const SHELL_GRACE_MS = 2_000;

const ShellInput = z.strictObject({
  command: z.string().min(1).describe('a command for /bin/sh, run in the workspace root'),
  timeoutMs: z.number().int().positive().max(120_000).optional(),
});

/** How the shell tool runs its commands. */
export type ShellOptions = {
  readonly isolation: ShellIsolation;
  readonly allowNetwork?: boolean;
  readonly env?: NodeJS.ProcessEnv;
  /** Where running commands are registered, so a forced exit can kill them. */
  readonly processes?: CommandProcesses;
};

/**
 * `shell`: runs one command in the workspace root, only when the user passed
 * `--allow-shell`, inside a sandbox (see `sandboxArguments`) unless the user passed
 * `--unsandboxed-shell`. Its environment is an allow-list. It gets SIGTERM on timeout
 * or when the run is cancelled and its whole process tree SIGKILL after a grace
 * period; the result says which. Its output is bounded. It is never re-run by
 * recovery: a command's effects cannot be checked in general.
 */
export function shellTool(workspace: Workspace, options: ShellOptions): ToolRegistration {
  const sandbox = options.isolation.kind === 'none' ? '' : 'in a sandbox: ';
  const network = options.allowNetwork ? '' : ', no network';
  return defineTool({
    name: 'shell',
    description: `Run a shell command in the workspace root (${sandbox}timeout ${SHELL_TIMEOUT_MS / 1000}s, output bounded${network}).`,
    input: ShellInput,
    nesting: 'direct_only',
    semantics: 'exclusive',
    recovery: RecoveryPolicy.neverAutoRetry(),
    run: ({ command, timeoutMs }, signal) =>
      runCommand(command, {
        cwd: workspace.root,
        timeoutMs: timeoutMs ?? SHELL_TIMEOUT_MS,
        signal,
        isolation: options.isolation,
        policy: {
          workspace: workspace.root,
          hidden: workspace.protectedPaths,
          allowNetwork: options.allowNetwork === true,
        },
        env: options.env ?? process.env,
        ...(options.processes === undefined ? {} : { processes: options.processes }),
      }),
  });
}

/** What a command did. A non-zero exit is a result, not a tool failure: the command ran. */
export type CommandResult = {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly cancelled: boolean;
  /** The process tree had to be killed (SIGKILL): after the grace period, or by a forced exit. */
  readonly killed: boolean;
  readonly sandboxed: boolean;
};

/** Options of `runCommand`. */
export type RunCommandOptions = {
  readonly cwd: string;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  readonly isolation?: ShellIsolation;
  readonly policy?: SandboxPolicy;
  readonly env?: NodeJS.ProcessEnv;
  readonly processes?: CommandProcesses;
};

/** Runs `command` with `/bin/sh -c` (in the sandbox when given one), bounded in time and output. */
export function runCommand(command: string, options: RunCommandOptions): Promise<CommandResult> {
  const isolation = options.isolation ?? { kind: 'none' };
  const env = commandEnvironment(options.env ?? process.env);
  const sandboxed = isolation.kind !== 'none' && options.policy !== undefined;
  const [file, args] = sandboxCommand(
    sandboxed ? isolation : { kind: 'none' },
    options.policy ?? { workspace: options.cwd, hidden: [], allowNetwork: false },
    ['/bin/sh', '-c', command],
    env,
  );
  // detached: its own session and process group, so a terminal's Ctrl-C reaches Factum, which decides.
  const child = spawn(file, args, {
    cwd: options.cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout = new BoundedOutput(SHELL_OUTPUT_LIMIT_BYTES);
  const stderr = new BoundedOutput(SHELL_OUTPUT_LIMIT_BYTES);
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  let timedOut = false;
  let cancelled = false;
  let killed = false;
  let killTimer: NodeJS.Timeout | undefined;
  const kill = () => {
    killed = true;
    // The sandbox's command runs in its own session: kill it, then the launcher (whose death ends the namespace).
    if (sandboxed) signalGroup(commandGroup(child.pid), 'SIGKILL');
    signalGroup(child.pid, 'SIGKILL');
  };
  const stop = () => {
    // SIGTERM to the command's group only: the launcher (bubblewrap, unshare) would die of it at
    // once, taking the command with it before it could clean up.
    signalGroup(sandboxed ? (commandGroup(child.pid) ?? child.pid) : child.pid, 'SIGTERM');
    killTimer ??= setTimeout(kill, SHELL_GRACE_MS);
  };
  const unregister = options.processes?.add(kill);
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, options.timeoutMs);
  const onAbort = () => {
    cancelled = true;
    stop();
  };
  if (options.signal.aborted) onAbort();
  else options.signal.addEventListener('abort', onAbort, { once: true });
  return new Promise<CommandResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, exitSignal) => {
      // Both sandboxes report a command killed by signal N as exit 128 + N, as a shell does.
      const bySignal = sandboxed && code !== null && code > 128 ? signalName(code - 128) : undefined;
      resolve({
        exitCode: bySignal === undefined ? code : null,
        signal: exitSignal ?? bySignal ?? null,
        stdout: stdout.text(),
        stderr: stderr.text(),
        timedOut,
        cancelled,
        killed,
        sandboxed,
      });
    });
  }).finally(() => {
    clearTimeout(timer);
    clearTimeout(killTimer);
    unregister?.();
    options.signal.removeEventListener('abort', onAbort);
    // Whatever the command left behind in its group goes with it.
    if (!sandboxed) signalGroup(child.pid, 'SIGKILL');
  });
}

/**
 * The sandboxed command's process group. Both launchers start an init (pid 1 inside the
 * namespace) in a session of its own, which starts the command: the group is the
 * init's. The init itself ignores SIGTERM from outside (pid 1 without a handler), so a
 * SIGTERM to the group reaches the command and what it started, and the init ends with them.
 */
function commandGroup(launcherPid: number | undefined): number | undefined {
  return childOf(launcherPid);
}

function childOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const first = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ')[0];
    return first === undefined || first === '' ? undefined : Number(first);
  } catch {
    return undefined;
  }
}

function signalName(number: number): string | undefined {
  return Object.entries(constants.signals).find(([, value]) => value === number)?.[0];
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    // A negative pid signals the whole group: the shell and whatever it started.
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}
