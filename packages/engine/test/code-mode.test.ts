import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { Engine } from '../src/index.ts';
import { bounds, configuration, done, echoCatalog, input } from './support/agent-loop.ts';
import { commitRecordingLog } from './support/commit-log.ts';

describe.each(testStores())('Code mode through the engine on $name', (stores) => {
  it('the model sees exec, the cell calls the tool as a recorded child, and the next prompt carries the cell output', async () => {
    await using store = await stores.create();
    await using provider = await startScriptedProvider();
    const source = 'const r = await tools.echo({ value: 20 }); text(r.value + 22);';
    provider.script(
      {
        toolCalls: [{ id: 'call-1', name: 'exec', arguments: { code: source } }],
        finishReason: 'tool_calls',
      },
      done,
    );
    const log = await EventLog.open(store.target);
    const engine = new Engine({
      log,
      models: new ModelExecutor({ timeoutMs: 5_000 }),
      code: new CodeExecutor(),
    });
    const effects: unknown[] = [];
    const echo = {
      names: () => ['echo'],
      invoke: async (_: string, value: unknown) => {
        effects.push(value);
        return value;
      },
    };
    const run = { ...input(provider, 'code', echo), configuration: configuration('code_mode') };
    const result = await engine.run(run);
    expect(result.outcome).toEqual({ kind: 'completed' });
    expect(effects).toEqual([{ value: 20 }]);
    const tools = provider.requests[0]!.tools as { function: { name: string; description: string } }[];
    expect(tools.map((tool) => tool.function.name)).toEqual(['exec']);
    expect(tools[0]!.function.description).toContain('tools.echo');
    const messages = provider.requests[1]!.messages as { role: string; content?: string }[];
    expect(JSON.parse(messages.find((message) => message.role === 'tool')!.content!)).toEqual({
      output: '42',
    });
    const origins = (await log.prefix(bounds)).events.flatMap(({ event }) =>
      event.fact.kind === 'tool_dispatched' ? [event.fact.call.origin.kind] : [],
    );
    expect(origins).toEqual(['provider', 'code_cell', 'code_mode']);
    await engine.drain();
    await log.close();
  });

  it('an exec call that reads once waits for three commits besides its step and the end: dispatches, the read, settlements', async () => {
    await using store = await stores.create();
    await using provider = await startScriptedProvider();
    provider.script(
      {
        toolCalls: [
          { id: 'call-1', name: 'exec', arguments: { code: 'text((await tools.echo({ v: 1 })).v);' } },
        ],
        finishReason: 'tool_calls',
      },
      done,
    );
    const { log, engine, commits } = await commitRecordingLog(store.target);
    await using host = engine('host-a');
    const read = { names: () => ['echo'], invoke: async (_: string, value: unknown) => value };
    const base = input(provider, 'read', read);
    const tools = echoCatalog(read, { readOnly: true });
    const result = await host.run({
      ...base,
      configuration: configuration('code_mode'),
      work: { kind: 'message', message: 'read', tools },
    });
    expect(result.outcome).toEqual({ kind: 'completed' });
    const step = ['model_requested', 'model_observed', 'model_completed'];
    expect(await commits()).toEqual([
      ['invocation_opened', ...step, 'tool_dispatched', 'tool_dispatched'],
      ['tool_dispatched', 'tool_settled'],
      ['tool_settled', 'tool_settled'],
      [...step, 'invocation_ended'],
    ]);
    expect(await log.verifyChain()).toMatchObject({ ok: true });
    await log.close();
  });
});
