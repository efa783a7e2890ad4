import type { PendingApproval } from '@factum/event-log';
import type { ProviderConfig } from '@factum/model';
import type { CAC } from 'cac';
import type { ShellIsolation } from '../builtin-tools/shell-sandbox.js';
import type { FactumRuntime } from '../factum-runtime.js';
import { tracingFrom, withOtlpOption } from '../telemetry/tracing-option.js';
import { describeCall } from '../terminal/describe-call.js';
import { shownText } from '../terminal/terminal-text.js';
import { approvalsOf, continueParked } from './approval-flow.js';
import { type ApprovalFlags, requiredApprovals, withApprovalOptions } from './approval-options.js';
import { type CliContext, dataDirOf, type GlobalOptions, operatorName } from './cli-context.js';
import { CliError } from './cli-error.js';
import { finishTurn } from './finish-turn.js';
import { indexInvocations } from './invocation-index.js';
import { connectMcpSources, type McpOptions, mcpServersFrom, withMcpOptions } from './mcp-options.js';
import { openRuntime } from './open-runtime.js';
import { type ProviderOptions, providerFrom, withProviderOptions } from './provider-options.js';
import { instructionsFor, scriptedRoute } from './run.js';
import { type ShellFlags, shellIsolation, toolSetup, withShellOptions } from './tool-setup.js';

type DecideOptions = GlobalOptions &
  ProviderOptions &
  McpOptions &
  ShellFlags &
  ApprovalFlags & {
    readonly note?: string;
    /** False on `--no-continue`. */
    readonly continue?: boolean;
    readonly script?: string;
    readonly otlp?: string;
  };

/** Notes longer than the log keeps are refused before anything is written. */
const MAX_NOTE = 2048;

/**
 * `factum approve <operation>` / `factum deny <operation>`: records a person's decision
 * on a call that waits for one, then — once every call of that run is decided —
 * continues the run in this process, shown as `run` shows it (unless `--no-continue`).
 */
export function registerDecide(cli: CAC, context: CliContext): void {
  for (const decision of ['approve', 'deny'] as const) {
    withApprovalOptions(
      withMcpOptions(
        withOtlpOption(
          withShellOptions(
            withProviderOptions(
              cli
                .command(
                  `${decision} <operation>`,
                  decision === 'approve'
                    ? 'Approve a call that waits for a person, then continue its run'
                    : 'Deny a call that waits for a person (the model is told), then continue its run',
                )
                .option('--note <text>', 'why, recorded with the decision (the model reads a denial’s note)')
                .option(
                  '--no-continue',
                  'only record the decision; continue later with `factum resume <run>`',
                )
                .option('--allow-shell', 'offer the shell tool to the continued run (in a sandbox)')
                .option('--script <file>', 'the continued run answers from a JSON file of scripted replies'),
            ),
          ),
        ),
      ),
    ).action((operation: string, options: DecideOptions) =>
      decide(decision, String(operation), options, context),
    );
  }
}

async function decide(
  decision: 'approve' | 'deny',
  operationId: string,
  options: DecideOptions,
  context: CliContext,
): Promise<number> {
  const { terminal } = context;
  const c = terminal.colors;
  const note = options.note === undefined ? undefined : String(options.note);
  if (note !== undefined && (note.trim() === '' || note.length > MAX_NOTE))
    throw new CliError('usage', `--note must be 1 to ${MAX_NOTE} characters`);
  // A shell that cannot be had stops the command before the decision is written.
  const shell = options.continue === false ? undefined : await shellIsolation(options, context.env);
  const dataDir = dataDirOf(options, context);
  const requireApproval = requiredApprovals(options, dataDir, context);
  await using runtime = await openRuntime({ target: { dataDir } });
  const approvals = await runtime.engine.pendingApprovals();
  const approval = approvals.find((a) => a.operationId === operationId);
  const others = approvals.filter(
    (a) =>
      a.operationId !== operationId &&
      a.decision === undefined &&
      a.invocation.invocationId === approval?.invocation.invocationId,
  );
  // The run would go on right after this decision: its provider is found first, so a
  // missing setting is said before anything is written.
  const continuing = options.continue !== false && approval !== undefined && others.length === 0;
  await using script = continuing ? await scriptedRoute(options, context) : undefined;
  const provider = continuing ? (script?.provider ?? providerFrom(options, dataDir, context)) : undefined;
  const by = operatorName(context);
  // The digest of the input listed: what is approved is exactly what the person saw.
  await runtime.engine.decide(operationId, {
    decision,
    by,
    ...(note === undefined ? {} : { note }),
    ...(approval === undefined
      ? {}
      : { inputDigest: approval.inputDigest, sessionId: approval.invocation.sessionId }),
  });
  if (approval === undefined) {
    terminal.line(
      `${decision === 'approve' ? c.green('✔ approved') : c.yellow('⊘ denied')} ${shownText(operationId)}`,
    );
    return 0;
  }
  terminal.line(
    `${decision === 'approve' ? c.green('✔ approved') : c.yellow('⊘ denied')} ${describeCall(approval.toolName, approval.input)} ${c.dim(shownText(`· ${operationId} · by ${by}`))}`,
  );
  if (options.continue === false) {
    terminal.line(
      c.dim(
        `continue later: factum resume ${shownText(approval.invocation.runId)} (once every call is decided)`,
      ),
    );
    return 0;
  }
  if (provider === undefined) {
    terminal.line(
      c.yellow(
        `the run goes on once the other ${others.length === 1 ? 'call is' : `${others.length} calls are`} decided:`,
      ),
    );
    for (const other of others) terminal.line(`  factum approve|deny ${shownText(other.operationId)}`);
    return 0;
  }
  return await continueAfter(approval, provider, { ...options, shell }, context, runtime, requireApproval);
}

/** Continues the decided call's run here, if nothing else of it waits and no one continued it. */
async function continueAfter(
  approval: PendingApproval,
  provider: ProviderConfig,
  options: DecideOptions & { readonly shell: ShellIsolation | undefined },
  context: CliContext,
  runtime: FactumRuntime,
  requireApproval: readonly string[],
): Promise<number> {
  const { terminal } = context;
  const c = terminal.colors;
  const parked = approval.invocation;
  if ((await approvalsOf(runtime, parked.invocationId)).some((a) => a.decision === undefined)) {
    terminal.line(c.yellow('another call of this run waits for a decision: see `factum approvals`'));
    return 0;
  }
  const view = await runtime.engine.parkedRun(parked.sessionId);
  if (view?.invocation.invocationId !== parked.invocationId) {
    terminal.line(c.dim('the run was already continued elsewhere: see `factum log`'));
    return 0;
  }
  const summary = (await indexInvocations(runtime.log, { sessionId: parked.sessionId })).find(
    (entry) => entry.invocation.invocationId === parked.invocationId,
  );
  const cwd = summary?.configuration?.cwd ?? context.cwd;
  const { workspace, tools, catalog, processes } = await toolSetup(options, context, {
    dataDir: dataDirOf(options, context),
    cwd,
    shell: options.shell,
  });
  await using mcp = await connectMcpSources(
    await mcpServersFrom(options, context.env),
    tools().map((tool) => tool.definition.name),
  );
  const tracing = await tracingFrom(options, context.env);
  const setup = {
    context,
    runtime,
    provider,
    configuration: { cwd: workspace.root, toolMode: summary?.configuration?.toolMode ?? 'direct' },
    instructions: instructionsFor(workspace),
    tools: () => catalog(mcp.registrations),
    requireApproval,
    processes,
    toolServers: mcp.servers,
  } as const;
  return await finishTurn(await continueParked(parked, setup), setup, tracing);
}
