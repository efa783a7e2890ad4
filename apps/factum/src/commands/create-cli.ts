import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { type CAC, cac } from 'cac';
import { registerApprovals } from './approvals.js';
import { checkFlags, restoreTextFlags } from './check-flags.js';
import type { CliContext } from './cli-context.js';
import { CliError } from './cli-error.js';
import { COPY_EXIT_CODES, registerCopy } from './copy.js';
import { registerDecide } from './decide.js';
import { registerDemo } from './demo.js';
import { registerFork } from './fork.js';
import { EXIT_AWAITING_APPROVAL } from './live-run.js';
import { registerLog } from './log.js';
import { printError } from './print-error.js';
import { RECOVER_EXIT_CODES, registerRecover } from './recover.js';
import { REPLAY_EXIT_CODES, registerReplay } from './replay.js';
import { registerResolve } from './resolve.js';
import { registerResume } from './resume.js';
import { registerRun } from './run.js';
import { registerServe } from './serve.js';
import { registerShow } from './show.js';
import { registerVerify, VERIFY_EXIT_CODES } from './verify.js';

/** The exit codes of commands that run turns, for their `--help`. */
const RUN_EXIT_CODES = [
  '0    the run completed (or paused for a handoff)',
  `${EXIT_AWAITING_APPROVAL}    the run waits for a person: calls need approval and no one could be asked here (not a TTY); \`factum approve|deny <operation>\``,
  '1    the run failed, or an error   2  a usage error   130  cancelled (Ctrl-C)',
];

/** Options that exist for the CLI's own child processes and stay out of `--help`. */
const HIDDEN = ['--crash-child'];

/** Builds the `factum` command line: every command, the global `--dir`, help and version. */
export function createCli(context: CliContext): CAC {
  const cli = cac('factum');
  cli.option('-C, --workspace <path>', 'run as if started in <path> (default: the current directory)');
  cli.option('--dir <path>', 'data directory (default: .factum in the workspace)');
  registerDemo(cli, context);
  registerRun(cli, context);
  registerFork(cli, context);
  registerLog(cli, context);
  registerShow(cli, context);
  registerRecover(cli, context);
  registerResume(cli, context);
  registerApprovals(cli, context);
  registerDecide(cli, context);
  registerResolve(cli, context);
  registerServe(cli, context);
  registerReplay(cli, context);
  registerVerify(cli, context);
  registerCopy(cli, context);
  cli.help((sections) => [
    ...sections.map((section) => ({
      ...section,
      body: section.body
        .split('\n')
        .filter((line) => !HIDDEN.some((name) => line.includes(name)))
        .join('\n'),
    })),
    ...(cli.matchedCommandName === 'recover'
      ? [{ title: 'Exit codes', body: RECOVER_EXIT_CODES.map((line) => `  ${line}`).join('\n') }]
      : []),
    ...(cli.matchedCommandName === 'replay'
      ? [{ title: 'Exit codes', body: REPLAY_EXIT_CODES.map((line) => `  ${line}`).join('\n') }]
      : []),
    ...(cli.matchedCommandName === 'verify'
      ? [{ title: 'Exit codes', body: VERIFY_EXIT_CODES.map((line) => `  ${line}`).join('\n') }]
      : []),
    ...(cli.matchedCommandName === 'copy'
      ? [{ title: 'Exit codes', body: COPY_EXIT_CODES.map((line) => `  ${line}`).join('\n') }]
      : []),
    ...(['run', 'fork', 'resume', 'approve', 'deny'].includes(cli.matchedCommandName ?? '')
      ? [{ title: 'Exit codes', body: RUN_EXIT_CODES.map((line) => `  ${line}`).join('\n') }]
      : []),
  ]);
  cli.version(context.version);
  return cli;
}

function workspaceDir(from: string, path: string): string {
  const dir = resolve(from, path);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new CliError('usage', `--workspace ${path}: no such directory`);
  return dir;
}

/**
 * Parses `argv`, runs the matched command and returns the exit code. Every error ends
 * here and is printed as one line.
 */
export async function main(argv: readonly string[], context: CliContext): Promise<number> {
  let cwd = context.cwd;
  // Commands read `cwd` when they run, after `-C` has been applied.
  const scoped: CliContext = {
    ...context,
    get cwd() {
      return cwd;
    },
  };
  const cli = createCli(scoped);
  try {
    cli.parse([...argv], { run: false });
    if (cli.options.help || cli.options.version) return 0;
    restoreTextFlags(argv.slice(2), cli.options);
    checkFlags(cli.options);
    if (typeof cli.options.workspace === 'string') cwd = workspaceDir(context.cwd, cli.options.workspace);
    if (cli.matchedCommand === undefined) {
      if (cli.args.length > 0) throw new CliError('usage', `unknown command ${JSON.stringify(cli.args[0])}`);
      cli.outputHelp();
      return 0;
    }
    const code: unknown = await cli.runMatchedCommand();
    return typeof code === 'number' ? code : 0;
  } catch (error) {
    return printError(context.terminal, error, context.env);
  }
}
