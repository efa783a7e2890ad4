import { join } from 'node:path';
import type { Command } from 'cac';
import { approvalsFromFiles } from '../provider-settings.js';
import type { CliContext } from './cli-context.js';
import { CliError } from './cli-error.js';
import type { ShellFlags } from './tool-setup.js';

/** The approval flags as cac parses them (`--require-approval` is repeatable). */
export type ApprovalFlags = {
  readonly requireApproval?: string | readonly string[];
  /** False on `--no-shell-approval`. */
  readonly shellApproval?: boolean;
};

/** Adds `--require-approval <tool>` (repeatable) and `--no-shell-approval` to a command that runs turns. */
export function withApprovalOptions(command: Command): Command {
  return command
    .option(
      '--require-approval <tool>',
      'every call of this tool waits for a person (repeatable; also `requireApproval` in the config files)',
    )
    .option(
      '--no-shell-approval',
      'let the shell run without approval even when it can reach beyond the workspace (--unsandboxed-shell, --allow-network)',
    );
}

/**
 * The tools whose calls need a person's approval in this run: the flags, the user's
 * configuration and the data directory's (which can only add), and the shell when it
 * can reach beyond the workspace — unsandboxed, or with the network — unless
 * `--no-shell-approval` says the user accepts that. A sandboxed, offline shell runs
 * without asking: its sandbox keeps it inside the workspace, which is the agent's to change.
 */
export function requiredApprovals(
  options: ApprovalFlags & ShellFlags & { readonly dir?: string },
  dataDir: string,
  context: CliContext,
): string[] {
  const flags = options.requireApproval;
  const named = (flags === undefined ? [] : Array.isArray(flags) ? flags : [flags]).map(String);
  for (const name of named) {
    if (name.trim() === '' || name === 'true')
      throw new CliError('usage', '--require-approval needs a tool name, like --require-approval write_file');
  }
  const fromFiles = approvalsFromFiles({ env: context.env, configFile: join(dataDir, 'config.json') });
  const shellReachesOut = options.unsandboxedShell === true || options.allowNetwork === true;
  const shell = shellReachesOut && options.shellApproval !== false ? ['shell'] : [];
  return [...new Set([...named, ...fromFiles, ...shell])];
}
