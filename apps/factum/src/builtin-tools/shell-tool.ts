import { spawn } from 'node:child_process';
import { RecoveryPolicy, type ToolRegistration } from '@factum/tools';
import { z } from 'zod';
import { BoundedOutput } from './bounded-output.js';
import { defineTool } from './define-tool.js';
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

/** Environment variables a command never sees: keys and tokens stay with Factum. */
const SECRET_NAME = /(API_?KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)/i;

/**
 * `shell`: runs one command in the workspace root, only when the user passed
 * `--allow-shell`. It runs in its own process group (a terminal's Ctrl-C reaches
 * Factum, which decides), gets SIGTERM on timeout or when the run is cancelled and
 * SIGKILL after a grace period, and its output is bounded. It is never re-run by
 * recovery: a command's effects cannot be checked in general.
 */
export function shellTool(workspace: Workspace): ToolRegistration {
  return defineTool({
    name: 'shell',
    description: `Run a shell command in the workspace root (timeout ${SHELL_TIMEOUT_MS / 1000}s, output bounded).`,
    input: ShellInput,
    nesting: 'direct_only',
    semantics: 'exclusive',
    recovery: RecoveryPolicy.neverAutoRetry(),
    run: ({ command, timeoutMs }, signal) =>
      runCommand(command, { cwd: workspace.root, timeoutMs: timeoutMs ?? SHELL_TIMEOUT_MS, signal }),
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
};

/** Runs `command` with `/bin/sh -c`, bounded in time and output, stopped on `signal`. */
export function runCommand(
  command: string,
  options: { readonly cwd: string; readonly timeoutMs: number; readonly signal: AbortSignal },
): Promise<CommandResult> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !SECRET_NAME.test(name)));
  const child = spawn('/bin/sh', ['-c', command], {
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
  let killTimer: NodeJS.Timeout | undefined;
  const stop = () => {
    signalGroup(child.pid, 'SIGTERM');
    killTimer ??= setTimeout(() => signalGroup(child.pid, 'SIGKILL'), SHELL_GRACE_MS);
  };
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
    child.once('close', (exitCode, exitSignal) => {
      resolve({
        exitCode,
        signal: exitSignal,
        stdout: stdout.text(),
        stderr: stderr.text(),
        timedOut,
        cancelled,
      });
    });
  }).finally(() => {
    clearTimeout(timer);
    clearTimeout(killTimer);
    options.signal.removeEventListener('abort', onAbort);
  });
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
