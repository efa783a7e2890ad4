import { type ModelToolCall, ToolError } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import type { EventLog } from '@factum/event-log';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ToolCatalog as Catalog,
  RunTools,
  type ToolCatalog,
  ToolHandler,
  type ToolSemantics,
} from '../src/index.ts';
import { invocation, logPerTest, seed, wide } from './support/fixtures.ts';
import { RecordingTool } from './support/recording-tool.ts';

let log: EventLog;
const code = new CodeExecutor();
logPerTest((opened) => {
  log = opened;
});

function registration(tool: RecordingTool, name: string, semantics: ToolSemantics = 'parallel') {
  return {
    definition: {
      name,
      description: `${name} tool`,
      inputSchema: {
        type: 'object',
        properties: { value: { type: 'number' }, fail: { type: 'boolean' } },
        additionalProperties: false,
      },
    },
    handler: ToolHandler.immediate(tool),
    nesting: 'nestable' as const,
    semantics,
  };
}

async function runStep(catalog: ToolCatalog, calls: ModelToolCall[]) {
  await seed(log, invocation, calls);
  const run = new RunTools({ sink: log, invocation, catalog, mode: 'direct', code });
  return { run, step: (await run.capture('.')).intoStep('step') };
}

const kinds = async () => (await log.prefix(wide)).events.map((stored) => stored.event.fact.kind);

describe('Direct mode', () => {
  it('the effect starts only after its T1 is durable, and T2 stores the whole result out of line', async () => {
    const tool = new RecordingTool(log, 'echo');
    const { run, step } = await runStep(new Catalog([registration(tool, 'echo')]), [
      { id: 'c1', name: 'echo', input: { value: 42 } },
    ]);
    const result = await step.invoke({ id: 'c1', name: 'echo', input: { value: 42 } });
    expect(result.json()).toEqual({ echoed: { value: 42 } });
    expect(tool.calls).toEqual([{ input: { value: 42 }, lastDurableKind: 'tool_dispatched' }]);
    await run.shutdown();
    const events = (await log.prefix(wide)).events;
    const settled = events.at(-1)!.event;
    expect(settled.fact).toMatchObject({
      kind: 'tool_settled',
      operationId: 'step:c1',
      outcome: { kind: 'succeeded' },
    });
    expect(events.at(-2)!.event.fact).toMatchObject({
      kind: 'tool_dispatched',
      operationId: 'step:c1',
      call: { origin: { kind: 'provider', stepId: 'step' } },
    });
    expect((await log.resolveToolResult('session', settled.id)).json()).toEqual({ echoed: { value: 42 } });
  });

  it('invalid input, unparseable arguments and unknown tools are rejected and nothing runs', async () => {
    const tool = new RecordingTool(log, 'echo');
    const calls: ModelToolCall[] = [
      { id: 'bad', name: 'echo', input: { value: 'not a number' } },
      { id: 'raw', name: 'echo', input: null, invalidArguments: '{"value": 4' },
      { id: 'ghost', name: 'ghost', input: {} },
    ];
    const { run, step } = await runStep(new Catalog([registration(tool, 'echo')]), calls);
    const codes = [];
    for (const call of calls) codes.push(await step.invoke(call).catch((error: ToolError) => error.code));
    expect(codes).toEqual(['invalid_input', 'invalid_input', 'unavailable']);
    expect(tool.calls).toEqual([]);
    await run.shutdown();
    const rejected = (await log.prefix(wide)).events.slice(-3).map((stored) => stored.event.fact);
    expect(rejected.map((fact) => (fact.kind === 'tool_rejected' ? fact.reason.kind : fact.kind))).toEqual([
      'invalid_input',
      'invalid_input',
      'unavailable',
    ]);
    expect(rejected[0]).toMatchObject({
      call: { kind: 'provider', stepId: 'step', callId: 'bad' },
      name: 'echo',
    });
  });

  it('a failing effect settles as failed and a call already aborted is rejected as cancelled', async () => {
    const tool = new RecordingTool(log, 'echo');
    const { run, step } = await runStep(new Catalog([registration(tool, 'echo')]), []);
    await expect(step.invoke({ id: 'f', name: 'echo', input: { fail: true } })).rejects.toMatchObject({
      code: 'failed',
    });
    const aborted = AbortSignal.abort();
    await expect(step.invoke({ id: 'x', name: 'echo', input: {} }, aborted)).rejects.toMatchObject({
      code: 'cancelled',
    });
    expect(tool.calls).toHaveLength(1);
    await run.shutdown();
    expect((await kinds()).slice(-3)).toEqual(['tool_dispatched', 'tool_settled', 'tool_rejected']);
  });

  it('parallel tools run together; an exclusive tool runs alone', async () => {
    const shared = new RecordingTool(log, 'shared');
    const alone = new RecordingTool(log, 'alone');
    const catalog = new Catalog([registration(shared, 'shared'), registration(alone, 'alone', 'exclusive')]);
    const { run, step } = await runStep(catalog, []);
    shared.hold();
    const first = step.invoke({ id: 'p1', name: 'shared', input: {} });
    const second = step.invoke({ id: 'p2', name: 'shared', input: {} });
    while (shared.running < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    const exclusive = step.invoke({ id: 'e1', name: 'alone', input: {} });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(alone.calls, 'the exclusive call waits for the running parallel ones').toHaveLength(0);
    shared.release();
    await Promise.all([first, second, exclusive]);
    expect(shared.maxRunning).toBe(2);
    expect(alone.calls).toHaveLength(1);
    await run.shutdown();
  });

  it('a zod input schema is converted to JSON Schema for the model and checked with zod', async () => {
    const tool = new RecordingTool(log, 'typed');
    const catalog = new Catalog([
      {
        ...registration(tool, 'typed'),
        definition: {
          name: 'typed',
          description: 'typed',
          inputSchema: z.object({ value: z.number().int().positive() }),
        },
      },
    ]);
    expect(catalog.specs()[0]!.inputSchema).toMatchObject({
      type: 'object',
      properties: { value: { type: 'integer' } },
    });
    const { run, step } = await runStep(catalog, []);
    await expect(step.invoke({ id: 'n', name: 'typed', input: { value: -1 } })).rejects.toMatchObject({
      code: 'invalid_input',
    });
    await step.invoke({ id: 'ok', name: 'typed', input: { value: 3 } });
    expect(tool.calls).toHaveLength(1);
    await run.shutdown();
  });

  it('retrying an accepted call is refused by storage before anything runs', async () => {
    const tool = new RecordingTool(log, 'echo');
    const { run, step } = await runStep(new Catalog([registration(tool, 'echo')]), []);
    await step.invoke({ id: 'c1', name: 'echo', input: {} });
    // The same step taken up again (as a retry would): storage refuses the second dispatch.
    const retry = (await run.capture('.')).intoStep('step');
    const again = await retry.invoke({ id: 'c1', name: 'echo', input: {} }).catch((error: unknown) => error);
    expect(ToolError.isInstance(again) && again.code).toBe('persistence');
    expect(tool.calls).toHaveLength(1);
    await expect(run.shutdown()).rejects.toMatchObject({ code: 'persistence' });
  });

  it('a call id repeated within one step is rejected as repeated_call_id under its own operation; only the first runs', async () => {
    const tool = new RecordingTool(log, 'echo');
    const { run, step } = await runStep(new Catalog([registration(tool, 'echo')]), []);
    await step.invoke({ id: 'c1', name: 'echo', input: { value: 1 } });
    const again = await step
      .invoke({ id: 'c1', name: 'echo', input: { value: 2 } })
      .catch((error: unknown) => error);
    expect(ToolError.isInstance(again) && again.code).toBe('invalid_input');
    expect((again as Error).message).toContain('same call id');
    expect(tool.calls).toHaveLength(1);
    await run.shutdown();
    const facts = (await log.prefix(wide)).events.map((stored) => stored.event.fact);
    expect(facts.at(-1)).toMatchObject({
      kind: 'tool_rejected',
      operationId: 'step:c1#2',
      input: { value: 2 },
      reason: { kind: 'repeated_call_id' },
    });
  });
});
