import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { Engine } from '../src/index.ts';
import { bounds, configuration, done, input } from './support/agent-loop.ts';

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
});
