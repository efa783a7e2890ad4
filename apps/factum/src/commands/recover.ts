import type { CAC } from 'cac';
import { hasLog } from '../data-directory.js';
import type { FactumRuntime } from '../factum-runtime.js';
import type { OtlpTracing } from '../telemetry/otlp-tracing.js';
import { tracingFrom, withOtlpOption } from '../telemetry/tracing-option.js';
import { describeCall, plural } from '../terminal/describe-call.js';
import { shownText } from '../terminal/terminal-text.js';
import { type CliContext, dataDirOf, type GlobalOptions } from './cli-context.js';
import { type InvocationSummary, indexInvocations } from './invocation-index.js';
import { type RecoverOutput, RecoverOutputSchema } from './json-output-schemas.js';
import {
  connectMcpSources,
  type McpOptions,
  type McpSources,
  mcpServersFrom,
  withMcpOptions,
} from './mcp-options.js';
import { openRuntime } from './open-runtime.js';
import { ownershipText } from './ownership-text.js';
import { printJson } from './print-json.js';

type RecoverOptions = GlobalOptions &
  McpOptions & {
    readonly apply?: boolean;
    readonly json?: boolean;
    readonly otlp?: string;
  };

/** `recover` exits with this when something is still open, so scripts can tell without parsing. */
export const EXIT_LEFT_OPEN = 3;

/** The exit codes `recover --help` documents. */
export const RECOVER_EXIT_CODES = [
  '0  nothing is left open (every invocation ended, every operation has an outcome)',
  `${EXIT_LEFT_OPEN}  something is left open (listed; after --apply: what it could not close)`,
  '1  an error (printed on stderr)   2  a usage error',
];

/**
 * `factum recover`: what a crash left open — invocations with no end, operations with
 * no outcome — and how to close each. `--apply` ends the unfinished invocations (as
 * failed {interrupted}) and applies each tool's recovery policy. Exits 0 when nothing
 * is (or is left) open, 3 otherwise.
 */
export function registerRecover(cli: CAC, context: CliContext): void {
  withMcpOptions(
    withOtlpOption(
      cli.command('recover', 'List unfinished invocations and uncertain operations, and how to resolve them'),
    ),
  )
    .option(
      '--apply',
      "end unfinished invocations whose host is gone and reconcile what the tools can (live hosts' runs are left alone)",
    )
    .option('--json', 'print one JSON document (RecoverOutputSchema, see the README) instead of text')
    .action(async (options: RecoverOptions) => {
      const dataDir = dataDirOf(options, context);
      if (!hasLog(dataDir)) {
        // Nothing was ever recorded here: nothing is open, and nothing is created to say so.
        const empty: RecoverOutput = { unfinished: [], uncertain: [], applied: null, leftOpen: false };
        if (options.json) printJson(context.terminal, RecoverOutputSchema, empty);
        else printOpen(empty, new Map(), context);
        return 0;
      }
      await using runtime = await openRuntime({ target: { dataDir } });
      const index = await indexInvocations(runtime.log);
      const unfinished = index.filter((summary) => summary.outcome === undefined);
      // The MCP servers' tools and their policies, when an operation is uncertain.
      await using mcp = index.some((entry) => entry.open.size > 0)
        ? await mcpToolsFor(options, context)
        : undefined;
      const uncertain: RecoverOutput['uncertain'] = [];
      for (const summary of index.filter((entry) => entry.open.size > 0))
        uncertain.push(...(await uncertainOf(summary, mcp)));
      const report: RecoverOutput = {
        unfinished: unfinished.map((summary) => summary.invocation),
        uncertain,
        applied: null,
        leftOpen: unfinished.length > 0 || uncertain.length > 0,
      };
      // Whose each unfinished run is, and until when its host's lease holds.
      const owners = new Map<string, string>();
      for (const summary of unfinished) {
        const ownership = await runtime.log.invocationOwnership(summary.invocation);
        owners.set(summary.invocation.invocationId, ownershipText(ownership));
      }
      if (!options.json) printOpen(report, owners, context);
      if (options.apply && report.leftOpen) {
        const tracing = await tracingFrom(options, context.env);
        // Only runs whose host's lease has expired are ended; a live host's are left alone.
        const swept = await runtime.engine.sweep();
        const endedInvocations = swept.ended.length;
        const stillLive = [...swept.live, ...swept.invalid].map((left) => ({
          invocationId: left.invocation.invocationId,
          owner: ownershipText(left.ownership),
        }));
        const decisions: NonNullable<RecoverOutput['applied']>['reconciled'] = [];
        // A live run's operations are in flight, not uncertain: only ended runs are reconciled.
        const ended = (await indexInvocations(runtime.log)).filter(
          (entry) => entry.open.size > 0 && entry.outcome !== undefined,
        );
        const { reconcileInvocation } = await import('./recovery-plan.js');
        for (const summary of ended) {
          for (const outcome of await reconcileInvocation(runtime, summary, mcp?.registrations)) {
            decisions.push({
              operationId: outcome.operationId,
              tool: outcome.name,
              decision: outcome.decision,
              reason: outcome.reason,
              attempt: outcome.attempt,
            });
          }
        }
        const after = await indexInvocations(runtime.log);
        await exportRecoveries(tracing, runtime, index, after, context);
        report.applied = { endedInvocations, reconciled: decisions };
        report.leftOpen = after.some((summary) => summary.outcome === undefined || summary.open.size > 0);
        if (!options.json) printApplied(report, stillLive, context);
      } else if (!options.json && report.leftOpen) {
        context.terminal.line();
        context.terminal.line(
          context.terminal.colors.dim(
            'nothing was changed; run `factum recover --apply` to act on the above',
          ),
        );
      }
      if (options.json) printJson(context.terminal, RecoverOutputSchema, report);
      return report.leftOpen ? EXIT_LEFT_OPEN : 0;
    });
}

/**
 * With `--otlp`: what recovery wrote, as trace data. An invocation that never ended
 * was never exported (its process died): all of it goes now, its open operations as
 * `uncertain` events. One that had ended gets a `factum recover` span in its trace
 * with the reconciliations.
 */
async function exportRecoveries(
  tracing: OtlpTracing | undefined,
  runtime: FactumRuntime,
  before: readonly InvocationSummary[],
  after: readonly InvocationSummary[],
  context: CliContext,
): Promise<void> {
  if (tracing === undefined) return;
  const earlier = new Map(before.map((summary) => [summary.invocation.invocationId, summary]));
  try {
    for (const summary of after) {
      const previous = earlier.get(summary.invocation.invocationId);
      if (previous === undefined || previous.lastSequence === summary.lastSequence) continue;
      await tracing.exportInvocation(
        runtime.log,
        summary.invocation,
        previous.outcome === undefined ? {} : { afterSequence: previous.lastSequence },
      );
    }
    await tracing.shutdown();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    context.terminal.error(context.terminal.colors.yellow(`the trace was not exported: ${message}`));
  }
}

/**
 * The configured MCP servers (the user config's `mcpServers`, then `--mcp` and
 * `--mcp-url`), connected as a run connects them, so that an uncertain call of theirs
 * gets its tool's recovery policy. A server that does not start is said on stderr and
 * left out: its calls stay uncertain, and the built-in tools' are still recovered.
 */
async function mcpToolsFor(options: RecoverOptions, context: CliContext): Promise<McpSources | undefined> {
  const configs = await mcpServersFrom(options, context.env);
  if (configs.length === 0) return undefined;
  // Named as a run names them: a tool whose name a built-in has gets its server's prefix.
  const { builtinToolNames } = await import('./recovery-plan.js');
  try {
    return await connectMcpSources(configs, await builtinToolNames(context.cwd));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    context.terminal.error(
      context.terminal.colors.yellow(`the MCP servers' tools were left out: ${shownText(message)}`),
    );
    return undefined;
  }
}

async function uncertainOf(
  summary: InvocationSummary,
  mcp: McpSources | undefined,
): Promise<RecoverOutput['uncertain']> {
  // The built-in tools load only for a log that has uncertain operations to describe.
  const { catalogFor, resolutionOf } = await import('./recovery-plan.js');
  const catalog = await catalogFor(summary, mcp?.registrations);
  return [...summary.open].map(([operationId, call]) => ({
    invocation: summary.invocation,
    operationId,
    tool: call.name,
    input: call.input,
    resolution: resolutionOf(call, catalog, mcp?.servers),
  }));
}

function printOpen(report: RecoverOutput, owners: ReadonlyMap<string, string>, context: CliContext): void {
  const { terminal } = context;
  const c = terminal.colors;
  if (!report.leftOpen) {
    terminal.line(
      `${c.green('✔')} nothing is left open: every invocation ended and every operation has an outcome`,
    );
    return;
  }
  if (report.unfinished.length > 0) {
    terminal.line(c.bold(`Unfinished invocations (${report.unfinished.length}): no invocation_ended`));
    for (const invocation of report.unfinished) {
      terminal.line(
        `  ${c.yellow('⚠')} ${shownText(invocation.invocationId)} ${c.dim(shownText(`session ${invocation.sessionId} · run ${invocation.runId}`))}`,
      );
      terminal.line(c.dim(`      ${shownText(owners.get(invocation.invocationId) ?? '')}`));
    }
  }
  if (report.uncertain.length > 0) {
    terminal.line(c.bold('Uncertain operations: dispatched (T1), never settled (T2)'));
    for (const operation of report.uncertain) {
      terminal.line(
        `  ${c.yellow('⚠')} ${describeCall(operation.tool, operation.input)} ${c.dim(shownText(`${operation.operationId} · ${operation.invocation.invocationId}`))}`,
      );
      terminal.line(c.dim(`      ${shownText(operation.resolution)}`));
    }
  }
}

function printApplied(
  report: RecoverOutput,
  stillLive: readonly { readonly invocationId: string; readonly owner: string }[],
  context: CliContext,
): void {
  const { terminal } = context;
  const c = terminal.colors;
  const applied = report.applied!;
  terminal.line();
  terminal.line(
    `${c.green('✔')} ended ${plural(applied.endedInvocations, 'unfinished invocation')} as failed {interrupted}`,
  );
  for (const left of stillLive) {
    terminal.line(`${c.yellow('⚠')} ${shownText(left.invocationId)} ${c.dim(shownText(left.owner))}`);
  }
  let left = 0;
  for (const outcome of applied.reconciled) {
    // A lost race means another reconciler recorded this operation: closed, not ours.
    const closed = outcome.decision !== 'unknown' && outcome.decision !== 'left_uncertain';
    if (!closed) left += 1;
    const mark = closed ? c.green('✔') : c.yellow('⚠');
    const attempt = outcome.attempt > 1 ? ` · attempt ${outcome.attempt}` : '';
    terminal.line(
      `${mark} ${shownText(outcome.tool)} ${c.dim(shownText(outcome.operationId))}: ${c.bold(outcome.decision)} ${c.dim(shownText(`(${outcome.reason})${attempt}`))}`,
    );
  }
  terminal.line(
    !report.leftOpen
      ? `${c.green('✔')} nothing is left open`
      : c.yellow(
          left > 0
            ? `${plural(left, 'operation')} still uncertain: decide by hand`
            : 'something is still open: an invocation another process is running, see above',
        ),
  );
}
