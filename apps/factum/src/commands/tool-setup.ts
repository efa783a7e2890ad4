import { dirname } from 'node:path';
import type { ToolCatalog, ToolRegistration } from '@factum/tools';
import type { Command } from 'cac';
import type { CommandProcesses } from '../builtin-tools/command-processes.js';
import type { ShellIsolation } from '../builtin-tools/shell-sandbox.js';
import type { Workspace } from '../builtin-tools/workspace.js';
import { userConfigFile } from '../provider-settings.js';
import type { CliContext } from './cli-context.js';
import { CliError } from './cli-error.js';

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
 * How the shell runs, decided before anything is written: not offered without
 * `--allow-shell` (`undefined`), unsandboxed only on `--unsandboxed-shell`, otherwise in
 * the sandbox found here (`FACTUM_SANDBOX` may force one). Where none can be made,
 * `--allow-shell` stops the command: a `no_sandbox` error (exit 2) that says why and
 * what to do, rather than a run that goes ahead without the tool the user asked for.
 */
export async function shellIsolation(
  flags: ShellFlags,
  env: NodeJS.ProcessEnv,
): Promise<ShellIsolation | undefined> {
  if (flags.unsandboxedShell === true) return { kind: 'none' };
  if (flags.allowShell !== true) return undefined;
  const { probeSandbox } = await import('../builtin-tools/shell-sandbox.js');
  const probe = probeSandbox(env);
  if (probe.kind === 'found') return probe.isolation;
  throw new CliError(
    'no_sandbox',
    `--allow-shell: no sandbox can be made here (${probe.reason}); install bubblewrap, or pass --unsandboxed-shell to run commands without one`,
  );
}

/**
 * Opens the workspace with Factum's own state protected (the data directory, the user
 * configuration), with the shell as `shellIsolation` decided it (`where.shell`).
 */
export async function toolSetup(
  flags: ShellFlags,
  context: CliContext,
  where: { readonly dataDir: string; readonly cwd?: string; readonly shell: ShellIsolation | undefined },
): Promise<ToolSetup> {
  // Loaded here, not at startup: `--help` and the commands without tools never need them.
  const [{ ToolCatalog }, { builtinTools }, { CommandProcesses }, { Workspace }] = await Promise.all([
    import('@factum/tools'),
    import('../builtin-tools/builtin-catalog.js'),
    import('../builtin-tools/command-processes.js'),
    import('../builtin-tools/workspace.js'),
  ]);
  const { dataDir } = where;
  const workspace = await Workspace.open(where.cwd ?? context.cwd, {
    protect: [dataDir, dirname(userConfigFile(context.env))],
  });
  const processes = new CommandProcesses();
  const isolation = where.shell;
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
