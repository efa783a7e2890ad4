import { type JsonValue, ToolError } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import type { EventLog } from '@factum/event-log';
import { describe, expect, it } from 'vitest';
import { RunTools, ToolCatalog, ToolHandler } from '../src/index.ts';
import { invocation, logPerTest, seed, wide } from './support/fixtures.ts';
import { RecordingTool } from './support/recording-tool.ts';
import { RidingSink } from './support/riding-sink.ts';

let log: EventLog;
const code = new CodeExecutor();
logPerTest((opened) => {
  log = opened;
});

function catalog(tool: RecordingTool, readOnly: boolean | undefined): ToolCatalog {
  return new ToolCatalog([
    {
      definition: { name: 'read', description: 'reads', inputSchema: { type: 'object' } },
      handler: ToolHandler.immediate(tool),
      nesting: 'nestable',
      semantics: 'parallel',
      ...(readOnly === undefined ? {} : { readOnly }),
    },
  ]);
}

async function callOnce(readOnly: boolean | undefined, input: { [key: string]: JsonValue } = { path: 'a' }) {
  const tool = new RecordingTool(log, 'read');
  const sink = new RidingSink(log);
  await seed(log, invocation, [{ id: 'c1', name: 'read', input }]);
  const run = new RunTools({ sink, invocation, catalog: catalog(tool, readOnly), mode: 'direct', code });
  const step = (await run.capture('.')).intoStep('step');
  return { tool, sink, run, step, invoke: () => step.invoke({ id: 'c1', name: 'read', input }) };
}

const facts = async () => (await log.prefix(wide)).events.map((stored) => stored.event.fact);

describe('read-only tools: the T1 rides with the T2', () => {
  it('a read-only call runs before its T1 is durable, and T1 and T2 commit in one transaction, in order', async () => {
    const { tool, sink, run, invoke } = await callOnce(true);
    const result = await invoke();
    await run.shutdown();
    expect(result.json()).toEqual({ echoed: { path: 'a' } });
    // When the effect ran, the log's last durable fact was still the model's step.
    expect(tool.calls).toEqual([{ input: { path: 'a' }, lastDurableKind: 'model_completed' }]);
    expect(sink.transactions).toEqual([['tool_dispatched', 'tool_settled']]);
    const [dispatched, settled] = (await facts()).slice(-2);
    expect(dispatched).toMatchObject({ kind: 'tool_dispatched', operationId: 'step:c1' });
    expect(settled).toMatchObject({
      kind: 'tool_settled',
      operationId: 'step:c1',
      outcome: { kind: 'succeeded' },
    });
  });

  it.each([undefined, false])(
    'a tool whose readOnly is %s keeps its T1 durable before the effect, in a transaction of its own',
    async (readOnly) => {
      const { tool, sink, run, invoke } = await callOnce(readOnly);
      await invoke();
      await run.shutdown();
      expect(tool.calls).toEqual([{ input: { path: 'a' }, lastDurableKind: 'tool_dispatched' }]);
      expect(sink.transactions).toEqual([['tool_dispatched'], ['tool_settled']]);
    },
  );

  it('a failed read settles as failed with its T1 in the same transaction', async () => {
    const { sink, run, invoke } = await callOnce(true, { fail: true });
    const error = await invoke().catch((thrown: unknown) => thrown);
    expect(ToolError.isInstance(error) && error.code).toBe('failed');
    await run.shutdown();
    expect(sink.transactions).toEqual([['tool_dispatched', 'tool_settled']]);
    expect((await facts()).at(-1)).toMatchObject({ kind: 'tool_settled', outcome: { kind: 'failed' } });
  });

  it('when the settlement cannot be committed, the read is never reported and nothing of the call is durable', async () => {
    const { tool, sink, run, invoke } = await callOnce(true);
    sink.failing = 'tool_settled';
    const error = await invoke().catch((thrown: unknown) => thrown);
    expect(ToolError.isInstance(error) && error.code).toBe('persistence');
    expect(tool.calls).toHaveLength(1);
    await expect(run.shutdown()).rejects.toMatchObject({ code: 'persistence' });
    // Neither the T1 nor the T2 reached the log: the call left no fact, as a read may.
    expect((await facts()).map((fact) => fact.kind)).toEqual([
      'invocation_opened',
      'model_requested',
      'model_completed',
    ]);
  });

  it('a sink that cannot hold a write commits the read-only T1 first, as for any tool', async () => {
    const tool = new RecordingTool(log, 'read');
    await seed(log, invocation, [{ id: 'c1', name: 'read', input: {} }]);
    const run = new RunTools({ sink: log, invocation, catalog: catalog(tool, true), mode: 'direct', code });
    await (await run.capture('.')).intoStep('step').invoke({ id: 'c1', name: 'read', input: {} });
    await run.shutdown();
    expect(tool.calls[0]!.lastDurableKind).toBe('tool_dispatched');
  });
});
