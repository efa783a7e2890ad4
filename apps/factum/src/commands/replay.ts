import { existsSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import type {
  OpenedInvocation,
  ReplayAgent,
  ReplayOptions,
  ReplayReport,
  ReplayTarget,
} from '@factum/engine';
import type { ProviderConfig } from '@factum/model';
import type { CAC } from 'cac';
import { hasLog } from '../data-directory.js';
import { type ApprovalFlags, requiredApprovals, withApprovalOptions } from './approval-options.js';
import { type CliContext, dataDirOf, type GlobalOptions } from './cli-context.js';
import { CliError } from './cli-error.js';
import { findInvocation, indexInvocations } from './invocation-index.js';
import { ReplayOutputSchema } from './json-output-schemas.js';
import { connectMcpSources, type McpOptions, mcpServersFrom, withMcpOptions } from './mcp-options.js';
import { openLogOf } from './open-runtime.js';
import { printJson } from './print-json.js';
import { type ProviderOptions, providerFrom, withProviderOptions } from './provider-options.js';
import { printReplay } from './replay-text.js';
import { instructionsFor, scriptedRoute } from './run.js';
import { type ShellFlags, toolSetup, withShellOptions } from './tool-setup.js';

type ReplayFlags = GlobalOptions &
  ProviderOptions &
  ShellFlags &
  McpOptions &
  ApprovalFlags & {
    readonly all?: boolean;
    readonly verify?: boolean;
    readonly script?: string;
    readonly json?: boolean;
    readonly scratch?: string;
  };

/** The exit code of a replay that found a divergence. */
export const EXIT_DIVERGED = 3;

/** The exit codes of `factum replay`, for its `--help`. */
export const REPLAY_EXIT_CODES = [
  '0    every replayed invocation is the same as recorded',
  `${EXIT_DIVERGED}    at least one diverged (the report says where)`,
  '1    an error   2  a usage error',
];

/**
 * `factum replay <invocation|session|--all>`: replays recorded runs without running any
 * effect or writing to the log — `--verify` (the default) with the recorded answers and
 * results, or a new model (`--model`/`--base-url`, or `--script`) whose calls are served
 * only where they match recorded ones. The agent is the one `factum run` builds here:
 * the built-in tools of this workspace (`--allow-shell` and the approval flags as the
 * runs had them) and its instructions.
 */
export function registerReplay(cli: CAC, context: CliContext): void {
  withMcpOptions(
    withApprovalOptions(
      withShellOptions(
        withProviderOptions(
          cli
            .command(
              'replay [id]',
              'Replay recorded runs: check today’s code against them, or try a new model',
            )
            .option('--all', 'replay every session of the log')
            .option(
              '--verify',
              'recorded answers and results; report the first fact produced differently (default)',
            )
            .option(
              '--script <file>',
              'a new model answering from a JSON file of scripted replies (model mode)',
            )
            .option(
              '--allow-shell',
              'the runs had the shell tool (the same catalog as `factum run --allow-shell`)',
            )
            .option('--scratch <file>', 'also write the facts the replay produced to <file>, as JSON lines')
            .option('--json', 'print the report as one JSON document (ReplayOutputSchema, see the README)'),
        ),
      ),
    ),
  )
    .example('factum replay --all')
    .example('factum replay 0193a0b4-… --model gpt-5 --base-url https://api.openai.com/v1 --json')
    .action(async (id: string | undefined, flags: ReplayFlags) => {
      const live = flags.model !== undefined || flags.baseUrl !== undefined;
      const modelMode = live || flags.script !== undefined;
      if (flags.verify && modelMode) {
        throw new CliError(
          'usage',
          '--verify replays the recorded answers: leave out --model, --base-url and --script',
        );
      }
      if ((id === undefined) === (flags.all !== true)) {
        throw new CliError('usage', 'name one invocation or session to replay, or pass --all');
      }
      const dataDir = dataDirOf(flags, context);
      if (!hasLog(dataDir)) throw new CliError('not_found', `no log in ${dataDir}: nothing to replay`);
      const requireApproval = requiredApprovals(flags, dataDir, context);
      await using script = await scriptedRoute(flags, context);
      const provider = script?.provider ?? providerOrPlaceholder(flags, dataDir, context, modelMode);
      const { workspace, tools, catalog } = await toolSetup(flags, context, {
        dataDir,
        shell: flags.allowShell ? { kind: 'none' } : undefined,
      });
      // The MCP servers `run` would offer (the user's config, then the flags): connected
      // for their tools' definitions only — every executor of a replay is the recorded one.
      await using mcp = await connectMcpSources(
        await mcpServersFrom(flags, context.env),
        tools().map((tool) => tool.definition.name),
      );
      await using log = await openLogOf(dataDir);
      const target = await targetOf(log, id, flags.all === true);
      const [{ Engine }, { ModelExecutor }, { CodeExecutor }] = await Promise.all([
        import('@factum/engine'),
        import('@factum/model'),
        import('@factum/code-runtime'),
      ]);
      // No lease and no recovery: a replay reads the log and writes nothing to it.
      const engine = new Engine({
        log,
        models: new ModelExecutor({ timeoutMs: 120_000 }),
        code: new CodeExecutor(),
        options: { lease: false, recoverOnStart: false },
      });
      const options: ReplayOptions = {
        target,
        mode: modelMode ? 'model' : 'verify',
        // The route the runs recorded: a verify run needs no model, and no provider settings but the body's.
        route: 'recorded',
        agent: await agentsOf(log, resolve(context.cwd, dataDir), {
          provider,
          catalog: catalog(mcp.registrations),
          instructions: instructionsFor(workspace),
          approvals: { requireApproval },
        }),
        ...(live ? { now: () => performance.now() } : {}),
        ...(flags.scratch === undefined ? {} : { scratchFile: resolve(context.cwd, String(flags.scratch)) }),
      };
      let report: ReplayReport;
      try {
        report = await engine.replay(log, options);
      } finally {
        await engine.close();
      }
      if (flags.json) printJson(context.terminal, ReplayOutputSchema, report);
      else printReplay(context.terminal, report);
      return report.summary.diverged > 0 ? EXIT_DIVERGED : 0;
    });
}

/**
 * The provider of a model replay (as `factum run` resolves it), or for `verify` the
 * configured one where there is one — its body settings are part of each request's
 * digest — and else a placeholder: each step takes the route its recorded request names.
 */
function providerOrPlaceholder(
  flags: ProviderOptions,
  dataDir: string,
  context: CliContext,
  modelMode: boolean,
): ProviderConfig {
  if (modelMode) return providerFrom(flags, dataDir, context);
  try {
    return providerFrom(flags, dataDir, context);
  } catch {
    return {
      kind: 'openai_chat_completions',
      baseUrl: 'http://127.0.0.1/v1',
      model: 'recorded',
      auth: { none: true },
    };
  }
}

/**
 * The agent of each invocation: `run`'s, except for the runs `factum demo` made — they were
 * given the demo's agent (the built-in tools of the demo's own workspace, under
 * `<dir>/demo/`, and no instructions), so a log the demo wrote replays the same.
 */
async function agentsOf(
  log: Parameters<typeof indexInvocations>[0],
  dataDir: string,
  agent: ReplayAgent,
): Promise<ReplayAgent | ((opened: OpenedInvocation) => ReplayAgent)> {
  const demoRoot = join(dataDir, 'demo') + sep;
  const cwds = new Set<string>();
  for (const summary of await indexInvocations(log)) {
    const cwd = summary.configuration?.cwd;
    if (cwd?.startsWith(demoRoot)) cwds.add(cwd);
  }
  if (cwds.size === 0) return agent;
  const [{ builtinCatalog }, { Workspace }] = await Promise.all([
    import('../builtin-tools/builtin-catalog.js'),
    import('../builtin-tools/workspace.js'),
  ]);
  const demo = new Map<string, ReplayAgent>();
  for (const cwd of cwds) {
    if (!existsSync(cwd)) continue;
    demo.set(cwd, {
      provider: agent.provider,
      catalog: builtinCatalog({ workspace: await Workspace.open(cwd) }),
    });
  }
  return (opened) => demo.get(opened.configuration?.cwd ?? '') ?? agent;
}

/** An id names a session when the log has one by that name, else an invocation (a unique prefix will do). */
async function targetOf(
  log: Parameters<typeof indexInvocations>[0],
  id: string | undefined,
  all: boolean,
): Promise<ReplayTarget> {
  if (all || id === undefined) return { kind: 'all' };
  const index = await indexInvocations(log);
  const name = String(id);
  if (index.some((summary) => summary.invocation.sessionId === name))
    return { kind: 'session', sessionId: name };
  const { invocation } = findInvocation(index, name);
  return { kind: 'invocation', sessionId: invocation.sessionId, invocationId: invocation.invocationId };
}
