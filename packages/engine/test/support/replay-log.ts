import type { HandoffIntent, ToolExecutor } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import type { ScriptedProvider } from '@factum/model/testing';
import type { ToolCatalog } from '@factum/tools';
import { Engine, type ReplayAgent, type RunInput } from '../../src/index.ts';
import { configuration, done, repeatedCallId } from './agent-loop.ts';
import { approvalCatalog, approvalInput, calls } from './approvals.ts';

export const INSTRUCTIONS = 'You are the replay test agent.';

/** An effect that records every input it ran with, and fails for `{ fail: true }`. */
export class Ledger implements ToolExecutor {
  readonly ran: unknown[] = [];
  names(): string[] {
    return ['echo', 'send'];
  }
  async invoke(_name: string, input: unknown): Promise<unknown> {
    this.ran.push(input);
    if ((input as { fail?: boolean }).fail === true) throw new Error('the echo was asked to fail');
    return input;
  }
}

/** The agent the recorded runs were given, as the app would pass it to a replay. */
export function agentOf(
  provider: ScriptedProvider,
  catalog: ToolCatalog,
  instructions = INSTRUCTIONS,
): ReplayAgent {
  return { provider: provider.config({ model: 'test', auth: { apiKey: 'k' } }), catalog, instructions };
}

function run(
  provider: ScriptedProvider,
  suffix: string,
  catalog: ToolCatalog,
  session = 'session',
): RunInput {
  const base = approvalInput(provider.config({ model: 'test', auth: { apiKey: 'k' } }), suffix, catalog);
  return { ...base, instructions: INSTRUCTIONS, invocation: { ...base.invocation, sessionId: session } };
}

function handoffIntent(): HandoffIntent {
  return {
    handoffId: 'handoff-1',
    hostEpoch: 'host',
    rootRunId: 'run-handoff',
    successorRunId: 'run-successor',
    successorInvocationId: 'invocation-successor',
    claimId: 'claim-1',
  };
}

/**
 * Leaves a log with what the engine records: parallel calls and a final answer, a
 * repeated call id, a call to a tool the run does not offer, a failed effect, a call
 * parked on approval then approved and carried out by a continuation, a Code mode cell
 * that calls a tool, and a run paused by a handoff at its safe point.
 */
export async function recordRuns(
  file: string,
  provider: ScriptedProvider,
  ledger: Ledger,
): Promise<ToolCatalog> {
  const catalog = approvalCatalog(ledger);
  provider.script(
    calls(['echo', { value: 1 }], ['echo', { value: 2 }]),
    done,
    repeatedCallId,
    calls(['missing', { value: 3 }], ['echo', { fail: true }]),
    done,
    calls(['send', { to: 'ops' }]),
    done,
    {
      toolCalls: [
        {
          id: 'call-1',
          name: 'exec',
          arguments: { code: 'const r = await tools.echo({ value: 20 }); text(r.value + 22);' },
        },
      ],
      finishReason: 'tool_calls',
    },
    done,
    { ...calls(['echo', { value: 9 }]), hold: true },
  );
  await using log = await EventLog.open(file);
  const engine = new Engine({
    log,
    models: new ModelExecutor({ timeoutMs: 5_000 }),
    code: new CodeExecutor(),
  });
  await engine.run(run(provider, 'parallel', catalog));
  await engine.run(run(provider, 'repeated', catalog));
  await engine.run(run(provider, 'parked', catalog));
  const [pending] = await engine.pendingApprovals();
  await engine.decide(pending!.operationId, { decision: 'approve', by: 'ops' });
  const parked = (await engine.parkedRun('session'))!;
  await engine.run({
    ...run(provider, 'continued', catalog),
    work: { kind: 'continuation', source: parked.source, tools: catalog },
  });
  await engine.run({ ...run(provider, 'code', catalog, 'cells'), configuration: configuration('code_mode') });
  const running = await engine.start(run(provider, 'handoff', catalog, 'moving'));
  await provider.requestArrived(9);
  const reservation = running.handoff.reserve(handoffIntent());
  provider.release(9);
  const held = await reservation.ready();
  await held.commit().wait();
  await running.wait();
  await engine.close();
  return catalog;
}
