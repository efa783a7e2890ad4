import type { RunOutcome } from '@factum/engine';
import { exportTrace } from '../telemetry/export-trace.js';
import type { OtlpTracing } from '../telemetry/otlp-tracing.js';
import { shownText } from '../terminal/terminal-text.js';
import { type ContinuationSetup, printParked, settleApprovals } from './approval-flow.js';
import type { CliContext } from './cli-context.js';
import { describeOutcome, exitCodeOfRun, type LiveRunOutcome } from './live-run.js';

/**
 * How every command that runs a turn (`run`, `resume`, `approve`, `deny`) ends it: the
 * calls it parked on are asked about inline where a person can answer (each answer
 * continues the run here), every invocation it took is exported as a trace, what still
 * waits is listed, and the summary printed. Returns the command's exit code. Callers
 * `return await` it: their `await using` runtime would otherwise close under it.
 */
export async function finishTurn(
  first: LiveRunOutcome,
  setup: ContinuationSetup,
  tracing: OtlpTracing | undefined,
): Promise<number> {
  const { context, runtime } = setup;
  const ended = [first.invocation];
  const outcome = await settleApprovals(first, {
    ...setup,
    ended: (continued) => ended.push(continued.invocation),
  });
  await exportTrace(tracing, runtime, ended, context);
  if (outcome.outcome.kind === 'approval_pending') await printParked(context, runtime, outcome.invocation);
  printSummary(context, outcome);
  return exitCodeOfRun(outcome);
}

/** The closing lines of a run: how it ended, what it used, how to continue. */
export function printSummary(context: CliContext, result: RunOutcome): void {
  const { terminal } = context;
  const c = terminal.colors;
  const { outcome } = result;
  const [sessionId, runId, invocationId] = [
    result.invocation.sessionId,
    result.invocation.runId,
    result.invocation.invocationId,
  ].map(shownText);
  const status =
    outcome.kind === 'completed'
      ? c.green(describeOutcome(outcome))
      : outcome.kind === 'cancelled' || outcome.kind === 'approval_pending'
        ? c.yellow(describeOutcome(outcome))
        : c.red(describeOutcome(outcome));
  terminal.line();
  terminal.line(
    `${status} ${c.dim(`· ${result.steps} model step${result.steps === 1 ? '' : 's'} · ${result.usage.totalTokens} tokens`)}`,
  );
  terminal.line(`${c.dim('session')} ${c.bold(sessionId!)} ${c.dim('· run')} ${runId}`);
  if (outcome.kind === 'approval_pending')
    terminal.line(c.dim('decide: factum approvals, then factum approve|deny <operation>'));
  else terminal.line(c.dim(`continue: factum run --session ${sessionId} "<message>"`));
  terminal.line(c.dim(`timeline: factum show ${invocationId}`));
}
