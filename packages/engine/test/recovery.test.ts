import { EventWrite, type Fact, RuntimeEvent } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { RecoveryPolicy, reconcileUncertain, ToolCatalog, ToolHandler } from '@factum/tools';
import { describe, expect, it } from 'vitest';
import { Engine, RunError } from '../src/index.ts';
import { bounds, done, input } from './support/agent-loop.ts';

const dead = {
  sessionId: 'session',
  turnId: 'turn-dead',
  runId: 'run-dead',
  invocationId: 'invocation-dead',
};

/** What a process that died mid-effect leaves: a dispatch with no settlement, no end. */
async function leaveDeadInvocation(log: EventLog): Promise<void> {
  const facts: Fact[] = [
    { kind: 'invocation_opened', input: { kind: 'message', content: 'question dead', sourceMessages: [] } },
    {
      kind: 'model_completed',
      stepId: 'dead/1',
      output: {
        parts: [
          { kind: 'tool_call', call: { id: 'call-1', name: 'echo', input: { value: 1 } } },
          { kind: 'tool_call', call: { id: 'call-2', name: 'echo', input: { value: 2 } } },
        ],
        finishReason: 'tool_calls',
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      },
    },
    {
      kind: 'tool_dispatched',
      operationId: 'dead/1:call-1',
      call: {
        id: 'call-1',
        name: 'echo',
        input: { value: 1 },
        origin: { kind: 'provider', stepId: 'dead/1' },
      },
    },
  ];
  for (const fact of facts) await log.append(EventWrite.plain(RuntimeEvent.create(dead, fact)));
}

describe.each(testStores())('recovery on open on $name', (stores) => {
  it('ends a dead invocation failed {interrupted}, refuses new work until its uncertain operation is reconciled', async () => {
    await using store = await stores.create();
    await using provider = await startScriptedProvider();
    provider.script(done);
    const log = await EventLog.open(store.target);
    await leaveDeadInvocation(log);
    const engine = new Engine({
      log,
      models: new ModelExecutor({ timeoutMs: 5_000 }),
      code: new CodeExecutor(),
    });
    const ran: unknown[] = [];
    const effect = { names: () => ['echo'], invoke: async (_: string, value: unknown) => ran.push(value) };

    const refused = await engine.run(input(provider, 'after', effect)).catch((error: unknown) => error);
    expect(RunError.isInstance(refused) && refused.code).toBe('uncertain_operations');
    expect((refused as Error).message).toContain('dead/1:call-1');
    const prefix = await log.prefix(bounds);
    expect(prefix.projectInvocation('invocation-dead').terminal).toBe('failed');
    const ending = prefix.events.at(-1)!.event.fact;
    expect(ending).toMatchObject({
      kind: 'invocation_ended',
      outcome: { kind: 'failed', error: { code: 'interrupted' } },
    });
    expect(prefix.events.at(-2)!.event.fact).toMatchObject({
      kind: 'tool_rejected',
      operationId: 'dead/1:call-2',
      reason: { kind: 'interrupted' },
    });
    expect((await log.invocationRecovery(dead, bounds)).uncertainOperations).toEqual(['dead/1:call-1']);

    const catalog = new ToolCatalog([
      {
        definition: { name: 'echo', description: 'echo', inputSchema: { type: 'object' } },
        handler: ToolHandler.immediate(effect),
        nesting: 'nestable',
        semantics: 'parallel',
        recovery: RecoveryPolicy.reconcile(async () => ({
          kind: 'succeeded',
          value: { value: 1, found: 'in the world' },
        })),
      },
    ]);
    const outcomes = await reconcileUncertain(log, dead, { catalog });
    expect(outcomes.map((outcome) => outcome.decision)).toEqual(['succeeded']);
    const result = await engine.run(input(provider, 'after', effect));
    expect(result.outcome).toEqual({ kind: 'completed' });
    expect(ran, 'recovery never runs an effect').toEqual([]);
    const messages = provider.requests[0]!.messages as { role: string; content?: string }[];
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'user']);
    expect(messages[2]!.content).toContain('in the world');
    expect(messages[3]!.content).toContain('did not run: the process stopped');
    await engine.drain();
    await log.close();
  });

  it('a message run may start over unknown outcomes when it says so explicitly, and the model is told they are unknown', async () => {
    await using store = await stores.create();
    await using provider = await startScriptedProvider();
    provider.script(done);
    const log = await EventLog.open(store.target);
    await leaveDeadInvocation(log);
    const engine = new Engine({
      log,
      models: new ModelExecutor({ timeoutMs: 5_000 }),
      code: new CodeExecutor(),
    });
    const effect = { names: () => ['echo'], invoke: async () => null };
    const base = input(provider, 'bold', effect);
    await engine.run({
      ...base,
      work: { kind: 'message', message: 'go on', allowPriorUnknown: true, tools: base.work.tools },
    });
    const messages = provider.requests[0]!.messages as { role: string; content?: string }[];
    expect(messages[2]!.content).toContain('the outcome is unknown');
    await engine.drain();
    await log.close();
  });
});
