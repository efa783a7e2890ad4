import { randomUUID } from 'node:crypto';
import type { Invocation, InvocationConfiguration } from '@factum/agent-facts';
import type { RunOutcome } from '@factum/engine';
import type { PendingApproval } from '@factum/event-log';
import type { ProviderConfig } from '@factum/model';
import type { ToolCatalog } from '@factum/tools';
import type { CommandProcesses } from '../builtin-tools/command-processes.js';
import type { FactumRuntime } from '../factum-runtime.js';
import { describeCall } from '../terminal/describe-call.js';
import { shownText } from '../terminal/terminal-text.js';
import { askYesNo } from './approval-prompt.js';
import { type CliContext, operatorName } from './cli-context.js';
import { CliError } from './cli-error.js';
import { type LiveRunOutcome, runLive } from './live-run.js';

/** What a continuation of a parked run needs: the same things a run does. */
export type ContinuationSetup = {
  readonly context: CliContext;
  readonly runtime: FactumRuntime;
  readonly provider: ProviderConfig;
  readonly configuration: InvocationConfiguration;
  readonly instructions: string;
  /** A fresh catalog for each continuation. */
  readonly tools: () => ToolCatalog;
  readonly requireApproval: readonly string[];
  readonly processes?: CommandProcesses;
  readonly toolServers?: ReadonlyMap<string, string>;
  /** Told of each continuation once it has ended (to export its trace). */
  readonly ended?: (outcome: RunOutcome) => void;
};

/** Whether a person can be asked here: stdin is a TTY. */
export function canAsk(context: CliContext): boolean {
  return context.stdin?.isTTY === true;
}

/** The approvals an invocation parked on, as the log lists them (decided ones included). */
export async function approvalsOf(runtime: FactumRuntime, invocationId: string): Promise<PendingApproval[]> {
  return (await runtime.engine.pendingApprovals()).filter(
    (approval) => approval.invocation.invocationId === invocationId,
  );
}

/**
 * After a run has ended: while it parked on approvals and a person is at a TTY, asks
 * `approve? [y/N]` for each undecided call, records each answer, and continues the run
 * in this process. Returns the last outcome — still `approval_pending` when no one can
 * be asked here, for the caller to say how to decide later.
 */
export async function settleApprovals(
  first: LiveRunOutcome,
  setup: ContinuationSetup,
): Promise<LiveRunOutcome> {
  let result = first;
  while (result.outcome.kind === 'approval_pending' && canAsk(setup.context)) {
    const { context, runtime } = setup;
    const c = context.terminal.colors;
    for (const approval of await approvalsOf(runtime, result.invocation.invocationId)) {
      if (approval.decision !== undefined) continue;
      printApproval(context, approval);
      const yes = await askYesNo(
        { stdin: context.stdin!, terminal: context.terminal },
        `${c.bold('approve?')} [y/N] `,
      );
      const decided = await decideOnce(runtime, approval, yes ? 'approve' : 'deny', operatorName(context));
      context.terminal.line(
        decided === 'recorded'
          ? `  ${yes ? c.green('approved') : c.yellow('denied')} ${c.dim(`by ${shownText(operatorName(context))}`)}`
          : c.yellow(`  already decided elsewhere: ${decided}`),
      );
    }
    if ((await approvalsOf(runtime, result.invocation.invocationId)).some((a) => a.decision === undefined))
      return result;
    result = await continueParked(result.invocation, setup);
    setup.ended?.(result);
  }
  return result;
}

/** Records a decision; a decision someone else recorded first is reported, not thrown. */
async function decideOnce(
  runtime: FactumRuntime,
  approval: PendingApproval,
  decision: 'approve' | 'deny',
  by: string,
): Promise<string> {
  try {
    await runtime.engine.decide(approval.operationId, {
      decision,
      by,
      inputDigest: approval.inputDigest,
      sessionId: approval.invocation.sessionId,
    });
    return 'recorded';
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'approval_decided_twice')
      return error.message;
    throw error;
  }
}

/**
 * Continues a run that parked on approvals, from the run's last boundary: a new
 * invocation of the same turn and run. The engine first dispatches each approved call
 * with exactly its recorded input, rejects the denied ones, then asks the model again.
 */
export async function continueParked(parked: Invocation, setup: ContinuationSetup): Promise<LiveRunOutcome> {
  const { runtime } = setup;
  const view = await runtime.engine.parkedRun(parked.sessionId);
  if (view?.invocation.invocationId !== parked.invocationId)
    throw new CliError(
      'not_found',
      `run ${parked.runId} has no calls left waiting: it was continued already`,
    );
  const invocation: Invocation = { ...parked, invocationId: `invocation-${randomUUID().slice(0, 8)}` };
  setup.context.terminal.line(
    setup.context.terminal.colors.dim(`continuing run ${shownText(parked.runId)}…`),
  );
  return runLive({
    context: setup.context,
    runtime,
    ...(setup.processes === undefined ? {} : { processes: setup.processes }),
    ...(setup.toolServers === undefined ? {} : { toolServers: setup.toolServers }),
    input: {
      invocation,
      provider: setup.provider,
      configuration: setup.configuration,
      instructions: setup.instructions,
      work: {
        kind: 'continuation',
        source: view.source,
        tools: setup.tools(),
        requireApproval: setup.requireApproval,
      },
    },
  });
}

/** A pending call as a person reads it before deciding: the tool, its input, the reason. */
export function printApproval(context: CliContext, approval: PendingApproval): void {
  const { terminal } = context;
  const c = terminal.colors;
  terminal.line(
    `${c.yellow('⏸')} ${describeCall(approval.toolName, approval.input)} ${c.dim('—')} ${c.yellow(`needs approval: ${shownText(approval.reason)}`)}`,
  );
  terminal.line(c.dim(`  operation ${shownText(approval.operationId)}`));
  const input = JSON.stringify(approval.input, null, 2) ?? 'null';
  const lines = input.split('\n');
  for (const line of lines.slice(0, 20)) terminal.line(c.dim(`  │ ${shownText(line)}`));
  if (lines.length > 20) terminal.line(c.dim(`  │ … ${lines.length - 20} more lines`));
  if (approval.expiresAt !== undefined)
    terminal.line(c.dim(`  denied as expired if not decided by ${shownText(approval.expiresAt)}`));
}

/** Off a TTY: the calls waiting, and the commands that decide them later. */
export async function printParked(context: CliContext, runtime: FactumRuntime, parked: Invocation) {
  const { terminal } = context;
  const c = terminal.colors;
  const waiting = (await approvalsOf(runtime, parked.invocationId)).filter((a) => a.decision === undefined);
  terminal.line();
  terminal.line(
    c.yellow(
      `awaiting approval: ${waiting.length === 1 ? '1 call waits' : `${waiting.length} calls wait`} for a person; nothing was run`,
    ),
  );
  for (const approval of waiting) {
    printApproval(context, approval);
    const op = shownText(approval.operationId);
    terminal.line(`  approve: ${c.bold(`factum approve ${op}`)}`);
    terminal.line(`  deny:    ${c.bold(`factum deny ${op} --note "<why>"`)}`);
  }
  terminal.line(
    c.dim('each continues the run once every call of it is decided; `factum approvals` lists them all'),
  );
}
