import type { Invocation } from '@factum/agent-facts';
import { reconcileUncertain } from '@factum/tools';
import { builtinCatalog } from '../builtin-tools/builtin-catalog.js';
import type { Workspace } from '../builtin-tools/workspace.js';
import { CliError } from '../commands/cli-error.js';
import { describeOutcome } from '../commands/live-run.js';
import type { FactumRuntime } from '../factum-runtime.js';
import { describeCall } from '../terminal/describe-call.js';
import type { Terminal } from '../terminal/terminal.js';
import type { Narrator } from './narrator.js';

const bounds = { maxEvents: 10_000, maxBytes: 64 * 1024 * 1024 };

/** Chapter: the log reopened after the crash, and what recovery reports. Returns the crashed invocation. */
export async function showCrashAftermath(options: {
  readonly runtime: FactumRuntime;
  readonly sessionId: string;
  readonly narrator: Narrator;
  readonly terminal: Terminal;
}): Promise<Invocation> {
  const { runtime, sessionId, narrator, terminal } = options;
  const c = terminal.colors;
  const unfinished = (await runtime.log.unfinishedInvocations()).filter(
    (invocation) => invocation.sessionId === sessionId,
  );
  const crashed = unfinished[0];
  if (crashed === undefined)
    throw new CliError('demo_failed', 'the crashed turn is not listed as unfinished');
  narrator.point(
    `${c.yellow('⚠ unfinished invocation')} ${crashed.invocationId} ${c.dim('(no invocation_ended)')}`,
  );
  const events = await runtime.log.invocationEvents(crashed, bounds);
  const recovery = await runtime.log.invocationRecovery(crashed, bounds);
  if (recovery.uncertainOperations.length === 0) {
    throw new CliError('demo_failed', 'the crashed turn has no uncertain operation');
  }
  for (const operationId of recovery.uncertainOperations) {
    const dispatched = events.find(
      ({ event }) => event.fact.kind === 'tool_dispatched' && event.fact.operationId === operationId,
    )?.event.fact;
    const what =
      dispatched?.kind === 'tool_dispatched'
        ? describeCall(dispatched.call.name, dispatched.call.input)
        : operationId;
    narrator.point(`${c.yellow('⚠ uncertain operation')} ${what}`);
    narrator.field(
      '',
      c.dim(`${operationId}: tool_dispatched (T1) is durable, tool_settled (T2) is missing`),
    );
  }
  narrator.say('The effect may or may not have happened. Recovery never runs it again on its own.');
  return crashed;
}

/** Chapter: ending the invocation, then closing the uncertain write with evidence. */
export async function recoverCrash(options: {
  readonly runtime: FactumRuntime;
  readonly crashed: Invocation;
  readonly workspace: Workspace;
  readonly narrator: Narrator;
  readonly terminal: Terminal;
}): Promise<void> {
  const { runtime, crashed, workspace, narrator, terminal } = options;
  const c = terminal.colors;
  const ended = await runtime.engine.recover();
  const events = await runtime.log.invocationEvents(crashed, bounds);
  const end = events.find(({ event }) => event.fact.kind === 'invocation_ended')?.event.fact;
  if (ended === 0 || end?.kind !== 'invocation_ended') {
    throw new CliError('demo_failed', 'recovery did not end the crashed invocation');
  }
  narrator.point(
    `${c.green('✔')} engine recovery ended ${crashed.invocationId}: ${describeOutcome(end.outcome)}`,
  );
  narrator.say('write_file declares RecoveryPolicy.reconcile: it compares the file on disk with the content');
  narrator.say('the call intended, by SHA-256 digest, and records what it found as tool_reconciled.');
  const outcomes = await reconcileUncertain(runtime.log, crashed, { catalog: builtinCatalog({ workspace }) });
  for (const outcome of outcomes) {
    const mark = outcome.decision === 'succeeded' ? c.green('✔') : c.yellow('⚠');
    narrator.point(
      `${mark} reconciled ${outcome.name} ${c.dim(outcome.operationId)}: ${c.bold(outcome.decision)}`,
    );
  }
  const reconciled = (await runtime.log.invocationEvents(crashed, bounds)).find(
    ({ event }) => event.fact.kind === 'tool_reconciled',
  )?.event;
  if (reconciled?.fact.kind !== 'tool_reconciled' || reconciled.fact.decision.kind !== 'succeeded') {
    throw new CliError('demo_failed', 'the uncertain write was not reconciled as succeeded');
  }
  const evidence = (await runtime.log.resolveToolResult(crashed.sessionId, reconciled.id)).json() as {
    digest?: string;
  };
  narrator.field(
    'evidence',
    `plan.md holds exactly the intended content (${String(evidence.digest).slice(0, 19)}…)`,
  );
  const left = await runtime.log.invocationRecovery(crashed, bounds);
  narrator.field('open now', `${left.uncertainOperations.length} uncertain operations; nothing ran twice`);
}
