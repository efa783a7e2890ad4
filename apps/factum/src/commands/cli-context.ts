import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { defaultDataDir, hasLog } from '../data-directory.js';
import type { Terminal } from '../terminal/terminal.js';
import { shownText } from '../terminal/terminal-text.js';
import { CliError } from './cli-error.js';

/**
 * What every command gets from the entry point instead of reaching for globals: the
 * working directory, the environment, the terminal to write to, and how to start this
 * same CLI again in a child process.
 */
export type CliContext = {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly terminal: Terminal;
  /** `process.execPath` plus the arguments that start this CLI (loader flags and script). */
  readonly self: { readonly execPath: string; readonly args: readonly string[] };
  /** The process to listen to for SIGINT. */
  readonly signals: Pick<NodeJS.Process, 'on' | 'off'>;
  /** The version `--version` prints. */
  readonly version: string;
  /**
   * Where a person answers questions (`approve? [y/N]`): questions are asked only when
   * it is a TTY. Absent, nothing is ever asked.
   */
  readonly stdin?: NodeJS.ReadableStream & { readonly isTTY?: boolean };
};

/** Options every command accepts. */
export type GlobalOptions = { readonly dir?: string };

/** The data directory: `--dir`, else `.factum` in the working directory. */
export function dataDirOf(options: GlobalOptions, context: CliContext): string {
  return options.dir === undefined ? defaultDataDir(context.cwd) : resolve(context.cwd, options.dir);
}

/** Who decides at this terminal, as approvals and resolutions record it: the OS user name. */
export function operatorName(context: CliContext): string {
  let name: string | undefined;
  try {
    name = userInfo().username;
  } catch {
    name = context.env.USER ?? context.env.LOGNAME;
  }
  return (name ?? '').trim().slice(0, 256) || 'operator';
}

/**
 * The log a command reads as it is: `--postgres`'s, or the data directory's, which must
 * hold one. A missing log is a wrong `--dir` far more often than an empty one: say so
 * (`nothing to <what>`), and create nothing.
 */
export function existingLogOf(
  options: GlobalOptions & { readonly postgres?: string },
  context: CliContext,
  what: string,
): { readonly postgres: string } | { readonly dataDir: string } {
  if (options.postgres !== undefined) return { postgres: String(options.postgres) };
  const dataDir = dataDirOf(options, context);
  if (!hasLog(dataDir))
    throw new CliError('not_found', `no log in ${shownText(dataDir)}: nothing to ${what}`);
  return { dataDir };
}
