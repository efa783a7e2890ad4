import type { InvocationConfiguration } from '@factum/agent-facts';
import type { CAC, Command } from 'cac';
import type { Workspace } from '../builtin-tools/workspace.js';
import type { FactumRuntime } from '../factum-runtime.js';
import { newInvocation } from '../new-invocation.js';
import { tracingFrom, withOtlpOption } from '../telemetry/tracing-option.js';
import { type ApprovalFlags, requiredApprovals, withApprovalOptions } from './approval-options.js';
import { type CliContext, dataDirOf, type GlobalOptions } from './cli-context.js';
import { finishTurn } from './finish-turn.js';
import { idempotencyKeyFrom, keyedSession } from './idempotency-option.js';
import { runLive } from './live-run.js';
import { connectMcpSources, type McpOptions, mcpServersFrom, withMcpOptions } from './mcp-options.js';
import { openRuntime } from './open-runtime.js';
import {
  type ProviderOptions,
  providerFrom,
  providerKindFrom,
  withProviderOptions,
} from './provider-options.js';
import { type ScriptedRoute, startScript } from './script-file.js';
import { type ShellFlags, shellIsolation, toolSetup, withShellOptions } from './tool-setup.js';

export type RunOptions = GlobalOptions &
  ProviderOptions &
  McpOptions &
  ShellFlags &
  ApprovalFlags & {
    readonly session?: string;
    readonly idempotencyKey?: string;
    readonly codeMode?: boolean;
    readonly script?: string;
    readonly otlp?: string;
  };

/** The system prompt of a CLI run: where the agent is and what its tools may touch. */
export function instructionsFor(workspace: Workspace): string {
  return [
    `You are an agent working in the directory ${workspace.root}.`,
    'Use the tools to look at and change files; every path is relative to that directory and cannot leave it.',
    'Answer briefly and say what you changed.',
  ].join(' ');
}

/**
 * The options of a command that runs a message turn with the built-in tools (`run`,
 * `fork`): the model, the tools, approvals and tracing.
 */
export function withTurnOptions(command: Command): Command {
  return withApprovalOptions(
    withMcpOptions(
      withOtlpOption(
        withShellOptions(
          withProviderOptions(
            command
              .option(
                '--code-mode',
                'give the model one exec tool running JavaScript cells that call the tools',
              )
              .option(
                '--allow-shell',
                'also offer a shell tool (commands run in a sandbox in the workspace, bounded in time)',
              )
              .option(
                '--script <file>',
                'answer from a JSON file of scripted replies instead of a model, offline (or FACTUM_SCRIPT)',
              ),
          ),
        ),
      ),
    ),
  );
}

/** `factum run "<message>"`: one message run with the built-in tools, shown live. */
export function registerRun(cli: CAC, context: CliContext): void {
  withTurnOptions(
    cli
      .command('run <message>', 'Run one message against an OpenAI-compatible model, with workspace tools')
      .option('--session <id>', 'continue this session (a new message run in it)')
      .option(
        '--idempotency-key <key>',
        'run this message at most once: the same command again gets the first run’s answer and exit code (the key lives in --session, or in a session derived from it)',
      ),
  )
    .example('factum run "summarise README.md" --base-url http://localhost:11434/v1 --model qwen3')
    .example('factum run "write hello.txt" --script replies.json')
    .example('factum run "send the invoice" --idempotency-key invoice-2026-12')
    .example('factum run "what time is it?" --mcp \'npx -y @modelcontextprotocol/server-everything\'')
    .action((message: string, options: RunOptions) => runMessage(String(message), options, context));
}

/**
 * One message run with the built-in tools, shown live: `factum run`, and `factum fork`,
 * whose `sessionOf` makes the session the message runs in once the runtime is open.
 */
export async function runMessage(
  message: string,
  options: RunOptions,
  context: CliContext,
  sessionOf?: (runtime: FactumRuntime) => Promise<string>,
): Promise<number> {
  const shell = await shellIsolation(options, context.env);
  const dataDir = dataDirOf(options, context);
  const key = idempotencyKeyFrom(options.idempotencyKey);
  const requireApproval = requiredApprovals(options, dataDir, context);
  await using script = await scriptedRoute(options, context);
  const provider = script?.provider ?? providerFrom(options, dataDir, context);
  const { workspace, tools, catalog, processes } = await toolSetup(options, context, { dataDir, shell });
  await using mcp = await connectMcpSources(
    await mcpServersFrom(options, context.env),
    tools().map((tool) => tool.definition.name),
  );
  const tracing = await tracingFrom(options, context.env);
  await using runtime = await openRuntime({ target: { dataDir } });
  const session =
    (await sessionOf?.(runtime)) ?? (options.session === undefined ? undefined : String(options.session));
  const invocation = newInvocation(session ?? (key === undefined ? undefined : keyedSession(key)));
  const configuration: InvocationConfiguration = {
    cwd: workspace.root,
    toolMode: options.codeMode ? 'code_mode' : 'direct',
  };
  const first = await runLive({
    context,
    processes,
    runtime,
    toolServers: mcp.servers,
    ...(key === undefined ? {} : { idempotencyKey: key }),
    input: {
      invocation,
      provider,
      configuration,
      instructions: instructionsFor(workspace),
      work: {
        kind: 'message',
        message: String(message),
        tools: catalog(mcp.registrations),
        requireApproval,
      },
    },
  });
  // On a TTY each pending call is asked about inline and the run goes on here.
  return await finishTurn(
    first,
    {
      context,
      runtime,
      provider,
      configuration,
      instructions: instructionsFor(workspace),
      tools: () => catalog(mcp.registrations),
      requireApproval,
      processes,
      toolServers: mcp.servers,
    },
    tracing,
  );
}

/** The scripted provider of `--script` or `FACTUM_SCRIPT`, if either is set. */
export async function scriptedRoute(
  options: ProviderOptions & { readonly script?: string },
  context: CliContext,
): Promise<ScriptedRoute | undefined> {
  const file = options.script ?? context.env.FACTUM_SCRIPT;
  if (file === undefined || file === '') return undefined;
  const kind = providerKindFrom(options);
  return startScript(String(file), {
    cwd: context.cwd,
    ...(kind === undefined ? {} : { kind }),
    ...(options.model === undefined ? {} : { model: String(options.model) }),
  });
}
