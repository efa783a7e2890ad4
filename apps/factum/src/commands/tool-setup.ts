import { dirname } from 'node:path';
import type { ToolCatalog, ToolRegistration } from '@factum/tools';
import type { Command } from 'cac';
import type { CommandProcesses } from '../builtin-tools/command-processes.js';
import type { ShellIsolation } from '../builtin-tools/shell-sandbox.js';
import type { Workspace } from '../builtin-tools/workspace.js';
import { userConfigFile } from '../provider-settings.js';
import type { CliContext } from './cli-context.js';

/** The shell flags as cac parses them. */
export type ShellFlags = {
  readonly allowShell?: boolean;
  readonly unsandboxedShell?: boolean;
  readonly allowNetwork?: boolean;
};

/** The built-in tools of a command: the workspace, a catalog per run, the commands to kill on a forced exit. */
export type ToolSetup = {
  readonly workspace: Workspace;
  /** The built-in tools' registrations (a fresh set per call). */
  readonly tools: () => ToolRegistration[];
  /** A run's catalog: the built-ins, then `extra` (an MCP server's tools, say). */
  readonly catalog: (extra?: readonly ToolRegistration[]) => ToolCatalog;
  readonly processes: CommandProcesses;
};

/** Adds `--unsandboxed-shell` and `--allow-network` to a command that has `--allow-shell`. */
export function withShellOptions(command: Command): Command {
  return command
    .option('--unsandboxed-shell', 'offer the shell without a sandbox (it then sees the whole file system)')
    .option('--allow-network', 'let shell commands reach the network (off by default)');
}

/**
 * Opens the workspace with Factum's own state protected (the data directory, the user
 * configuration) and decides the shell: sandboxed when a sandbox can be made, not
 * offered (with a one-line notice) when it cannot, unsandboxed only on `--unsandboxed-shell`.
 */
export async function toolSetup(
  flags: ShellFlags,
  context: CliContext,
  where: { readonly dataDir: string; readonly cwd?: string },
): Promise<ToolSetup> {
  // Loaded here, not at startup: `--help` and the commands without tools never need them.
  const [{ ToolCatalog }, { builtinTools }, { CommandProcesses }, { findSandbox }, { Workspace }] =
    await Promise.all([
      import('@factum/tools'),
      import('../builtin-tools/builtin-catalog.js'),
      import('../builtin-tools/command-processes.js'),
      import('../builtin-tools/shell-sandbox.js'),
      import('../builtin-tools/workspace.js'),
    ]);
  const { dataDir } = where;
  const workspace = await Workspace.open(where.cwd ?? context.cwd, {
    protect: [dataDir, dirname(userConfigFile(context.env))],
  });
  const processes = new CommandProcesses();
  let isolation: ShellIsolation | undefined;
  if (flags.unsandboxedShell === true) isolation = { kind: 'none' };
  else if (flags.allowShell === true) {
    isolation = findSandbox(context.env);
    if (isolation === undefined) {
      context.terminal.error(
        context.terminal.colors.yellow(
          'the shell is not offered: no sandbox can be made here (install bubblewrap), or pass --unsandboxed-shell',
        ),
      );
    }
  }
  const tools = () =>
    builtinTools({
      workspace,
      env: context.env,
      processes,
      allowNetwork: flags.allowNetwork === true,
      ...(isolation === undefined ? {} : { allowShell: true, isolation }),
    });
  const catalog = (extra: readonly ToolRegistration[] = []) => new ToolCatalog([...tools(), ...extra]);
  return { workspace, tools, catalog, processes };
}
