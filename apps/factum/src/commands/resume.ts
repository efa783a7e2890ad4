import type { CAC } from 'cac';
import { newInvocation } from '../new-invocation.js';
import { tracingFrom, withOtlpOption } from '../telemetry/tracing-option.js';
import { type ApprovalFlags, requiredApprovals, withApprovalOptions } from './approval-options.js';
import { type CliContext, dataDirOf, type GlobalOptions } from './cli-context.js';
import { CliError } from './cli-error.js';
import { finishTurn } from './finish-turn.js';
import { indexInvocations } from './invocation-index.js';
import { runLive } from './live-run.js';
import { connectMcpSources, type McpOptions, mcpServersFrom, withMcpOptions } from './mcp-options.js';
import { openRuntime } from './open-runtime.js';
import { type ProviderOptions, providerFrom, withProviderOptions } from './provider-options.js';
import { instructionsFor } from './run.js';
import { type ShellFlags, shellIsolation, toolSetup, withShellOptions } from './tool-setup.js';

type ResumeOptions = GlobalOptions &
  ProviderOptions &
  McpOptions &
  ShellFlags &
  ApprovalFlags & { readonly session?: string; readonly otlp?: string };

/**
 * `factum resume <run-id>`: a continuation from where a run stands in the log, in the
 * workspace and tool mode it recorded. The engine refuses it (and this prints why) while
 * operations of that history have unknown outcomes.
 */
export function registerResume(cli: CAC, context: CliContext): void {
  withApprovalOptions(
    withMcpOptions(
      withOtlpOption(
        withShellOptions(
          withProviderOptions(
            cli
              .command(
                'resume <run-id>',
                'Continue a run from its last recorded fact (refused while operations are uncertain)',
              )
              .option('--session <id>', 'the session of the run (found in the log when omitted)')
              .option('--allow-shell', 'also offer the shell tool (in a sandbox)'),
          ),
        ),
      ),
    ),
  ).action(async (runId: string, options: ResumeOptions) => {
    const shell = await shellIsolation(options, context.env);
    const dataDir = dataDirOf(options, context);
    const requireApproval = requiredApprovals(options, dataDir, context);
    await using runtime = await openRuntime({ target: { dataDir } });
    const filter = options.session === undefined ? {} : { sessionId: String(options.session) };
    const runs = (await indexInvocations(runtime.log, filter)).filter(
      (summary) => summary.invocation.runId === String(runId),
    );
    const last = runs.at(-1);
    if (last === undefined)
      throw new CliError('not_found', `no run ${runId} in the log: list runs with \`factum log\``);
    // A completed run has nothing to continue: asking the model again would be a new turn
    // the user did not ask for.
    if (last.outcome?.kind === 'completed') {
      throw new CliError(
        'nothing_to_resume',
        `run ${runId} completed: there is nothing to resume; ask more with \`factum run --session ${last.invocation.sessionId} "<message>"\``,
      );
    }
    // Only now the provider: a run that cannot be resumed is said so before any settings are missed.
    const provider = providerFrom(options, dataDir, context);
    const tracing = await tracingFrom(options, context.env);
    // Runs a dead process left open are ended first, so the continuation starts after their end.
    await runtime.engine.recover();
    const source = await runtime.log.runSource(last.invocation.sessionId, last.invocation.runId);
    if (source === undefined) throw new CliError('not_found', `run ${runId} has no recorded facts`);
    const cwd = last.configuration?.cwd ?? context.cwd;
    const { workspace, tools, catalog, processes } = await toolSetup(options, context, {
      dataDir,
      cwd,
      shell,
    });
    const invocation = newInvocation(last.invocation.sessionId);
    await using mcp = await connectMcpSources(
      await mcpServersFrom(options, context.env),
      tools().map((tool) => tool.definition.name),
    );
    const configuration = {
      cwd: workspace.root,
      toolMode: last.configuration?.toolMode ?? 'direct',
    } as const;
    const first = await runLive({
      context,
      processes,
      runtime,
      toolServers: mcp.servers,
      input: {
        invocation,
        provider,
        configuration,
        instructions: instructionsFor(workspace),
        work: {
          kind: 'continuation',
          source: source.boundary,
          tools: catalog(mcp.registrations),
          requireApproval,
        },
      },
    });
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
  });
}
