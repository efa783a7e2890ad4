import { readdirSync } from 'node:fs';
import { successorOf } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { Engine, RunError, type RunInput } from '@factum/engine';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { type ScriptedProvider, startScriptedProvider } from '@factum/model/testing';
import { ToolCatalog } from '@factum/tools';
import { describe, expect, it } from 'vitest';
import { McpToolSource } from '../src/index.ts';
import { temporaryDirectory, wide } from './support/log-fixtures.ts';
import { everything, filesystem, keyed } from './support/servers.ts';

const usage = { inputTokens: 1, outputTokens: 1 };
const done = { text: 'done', finishReason: 'stop' as const, usage };
const code = new CodeExecutor();

function runInput(provider: ScriptedProvider, suffix: string, tools: ToolCatalog): RunInput {
  return {
    invocation: {
      sessionId: 'session',
      turnId: `turn-${suffix}`,
      runId: `run-${suffix}`,
      invocationId: `invocation-${suffix}`,
    },
    provider: provider.config({ model: 'test', auth: { apiKey: 'scripted' } }),
    providerOptions: {},
    configuration: { cwd: '/workspace', toolMode: 'direct' },
    work: {
      kind: 'message',
      message: `question ${suffix}`,
      sourceMessages: [],
      allowPriorUnknown: false,
      tools,
    },
  } as RunInput;
}

describe('MCP tools in engine runs', () => {
  it('a tool the user declares read_only is registered readOnly and its turn waits for two commits; the server’s hint alone keeps three', async () => {
    const commitsOfEchoTurn = async (recovery: Record<string, 'read_only'>) => {
      using dir = temporaryDirectory();
      await using log = await EventLog.open(dir.file);
      await using source = await McpToolSource.connect(everything({ recovery }));
      await using provider = await startScriptedProvider();
      provider.script(
        {
          toolCalls: [{ id: 'c1', name: 'echo', arguments: '{"message":"read"}' }],
          finishReason: 'tool_calls',
          usage,
        },
        done,
      );
      const catalog = new ToolCatalog(source.registrations());
      const engine = new Engine({ log, models: new ModelExecutor({ timeoutMs: 10_000 }), code });
      const before = log.stats().commits;
      const outcome = await engine.run(runInput(provider, 'read', catalog));
      expect(outcome.outcome).toEqual({ kind: 'completed' });
      await engine.drain();
      return {
        commits: log.stats().commits - before,
        echo: catalog.get('echo')!.registration.readOnly,
        hinted: catalog.get('trigger-long-running-operation')!.registration.readOnly,
      };
    };
    expect(await commitsOfEchoTurn({ echo: 'read_only' })).toEqual({
      commits: 2,
      echo: true,
      hinted: undefined,
    });
    // `echo` says nothing of itself; the long operation's readOnlyHint is only a hint.
    expect(await commitsOfEchoTurn({})).toEqual({ commits: 3, echo: undefined, hinted: undefined });
  }, 60_000);

  it('a model that attacks — invalid input, tools the server never listed, broken JSON — gets recorded rejections and nothing reaches the server', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    await using source = await McpToolSource.connect(filesystem(dir.path));
    await using provider = await startScriptedProvider();
    provider.script(
      {
        toolCalls: [
          { id: 'c1', name: 'write_file', arguments: '{"path": 42, "content": "x"}' },
          { id: 'c2', name: 'delete_everything', arguments: '{"path": "/"}' },
          { id: 'c3', name: 'write_file', arguments: '{"path": "' },
          { id: 'c4', name: 'write_file', arguments: `{"path": "${dir.path}/pwned.txt"}` },
        ],
        finishReason: 'tool_calls',
        usage,
      },
      done,
    );
    const before = readdirSync(dir.path).sort();
    const engine = new Engine({ log, models: new ModelExecutor({ timeoutMs: 10_000 }), code });
    const outcome = await engine.run(runInput(provider, 'attack', new ToolCatalog(source.registrations())));
    await engine.drain();
    expect(outcome.outcome).toEqual({ kind: 'completed' });
    const facts = (await log.prefix(wide)).events.map(({ event }) => event.fact);
    expect(facts.filter((fact) => fact.kind === 'tool_dispatched')).toEqual([]);
    const reasons = facts.flatMap((fact) => (fact.kind === 'tool_rejected' ? [fact.reason.kind] : []));
    expect(reasons).toEqual(['invalid_input', 'unavailable', 'invalid_input', 'invalid_input']);
    expect(readdirSync(dir.path).sort()).toEqual(before);
  }, 60_000);

  it('a handoff successor whose MCP server lists a changed tool set is refused; the same set is accepted', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    await using first = await McpToolSource.connect(keyed(dir.path));
    await using provider = await startScriptedProvider();
    provider.script(
      {
        toolCalls: [{ id: 'c1', name: 'charge', arguments: '{"amount": 1}' }],
        finishReason: 'tool_calls',
        usage,
        hold: true,
      },
      { ...done, hold: true },
      done,
    );
    const engine = new Engine({ log, models: new ModelExecutor({ timeoutMs: 10_000 }), code });
    const running = await engine.start(runInput(provider, 'first', new ToolCatalog(first.registrations())));
    await provider.requestArrived(0);
    const intent = {
      handoffId: 'h',
      hostEpoch: 'host',
      rootRunId: 'run-first',
      successorRunId: 'run-next',
      successorInvocationId: 'invocation-next',
      claimId: 'claim',
    };
    const reservation = running.handoff.reserve(intent);
    provider.release(0);
    const held = await reservation.ready();
    const pause = await held.commit().wait();
    await running.wait();
    provider.release(1);
    const source = (await log.runSource('session', 'run-first'))!.boundary;
    const successor = (tools: ToolCatalog): RunInput => {
      const base = runInput(provider, 'next', tools);
      return {
        ...base,
        invocation: successorOf(intent, source.invocation),
        work: { kind: 'handoff', source, pause, tools },
      };
    };
    await using changed = await McpToolSource.connect(keyed(dir.path, ['--extra']));
    const refused = await engine
      .start(successor(new ToolCatalog(changed.registrations())))
      .catch((e: unknown) => e);
    expect(RunError.isInstance(refused) && refused.code).toBe('fingerprint_mismatch');
    await using same = await McpToolSource.connect(keyed(dir.path));
    const accepted = await engine.start(successor(new ToolCatalog(same.registrations())));
    expect((await accepted.wait()).outcome).toEqual({ kind: 'completed' });
    await engine.drain();
  }, 90_000);
});
