import { type ModelToolCall, ToolError } from '@factum/agent-facts';
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

function catalog(tool: RecordingTool, readOnly: boolean): ToolCatalog {
  return new ToolCatalog([
    {
      definition: { name: 'read', description: 'reads', inputSchema: { type: 'object' } },
      handler: ToolHandler.immediate(tool),
      nesting: 'nestable',
      semantics: 'parallel',
      readOnly,
    },
  ]);
}

const cell = (source: string): ModelToolCall => ({ id: 'parent', name: 'exec', input: { code: source } });

async function runCell(readOnly: boolean, source: string) {
  const tool = new RecordingTool(log, 'read');
  const sink = new RidingSink(log);
  const call = cell(source);
  await seed(log, invocation, [call]);
  const run = new RunTools({ sink, invocation, catalog: catalog(tool, readOnly), mode: 'code_mode', code });
  const step = (await run.capture('.')).intoStep('step');
  return { tool, sink, run, invoke: () => step.invoke(call) };
}

const T1 = 'tool_dispatched';
const T2 = 'tool_settled';
const facts = async () => (await log.prefix(wide)).events.map((stored) => stored.event.fact);

/**
 * Nothing runs between an `exec` call's dispatch and its cell's, nor between the cell's
 * settlement and the call's: each pair commits in one transaction. A child call keeps the
 * protocol of its tool.
 */
describe('the commits of a Code mode call', () => {
  it('the parent’s and the cell’s T1 commit together before the cell runs, and their T2s together after', async () => {
    const { tool, sink, run, invoke } = await runCell(
      false,
      "text(JSON.stringify(await tools.read({ path: 'b' })));",
    );
    const result = await invoke();
    await run.shutdown();
    expect(result.json()).toEqual({ output: JSON.stringify({ echoed: { path: 'b' } }) });
    // The child's effect ran after its own T1, which followed the pair.
    expect(tool.calls).toEqual([{ input: { path: 'b' }, lastDurableKind: T1 }]);
    expect(sink.transactions).toEqual([[T1, T1], [T1], [T2], [T2, T2]]);
    const operations = (await facts()).flatMap((fact) =>
      fact.kind === T1 || fact.kind === T2 ? [`${fact.kind} ${fact.operationId}`] : [],
    );
    expect(operations).toEqual([
      `${T1} step:parent`,
      `${T1} step:parent#cell`,
      `${T1} step:parent#cell/c0`,
      `${T2} step:parent#cell/c0`,
      `${T2} step:parent#cell`,
      `${T2} step:parent`,
    ]);
  });

  it('a read-only child commits its T1 with its T2, so a cell that reads once waits for three commits', async () => {
    const { sink, run, invoke } = await runCell(
      true,
      "text(JSON.stringify(await tools.read({ path: 'b' })));",
    );
    await invoke();
    await run.shutdown();
    expect(sink.transactions).toEqual([
      [T1, T1],
      [T1, T2],
      [T2, T2],
    ]);
  });

  it('a cell that fails settles both as failed in one transaction', async () => {
    const { sink, run, invoke } = await runCell(true, "throw new Error('no');");
    const error = await invoke().catch((thrown: unknown) => thrown);
    expect(ToolError.isInstance(error) && error.code).toBe('failed');
    await run.shutdown();
    expect(sink.transactions).toEqual([
      [T1, T1],
      [T2, T2],
    ]);
    expect((await facts()).slice(-2)).toMatchObject([
      { kind: T2, operationId: 'step:parent#cell', outcome: { kind: 'failed' } },
      { kind: T2, operationId: 'step:parent', outcome: { kind: 'failed' } },
    ]);
  });

  it('when the pair of T1s cannot be committed, the cell never runs and neither dispatch is durable', async () => {
    const { tool, sink, run, invoke } = await runCell(true, "await tools.read({}); text('ran');");
    sink.failing = T1;
    const error = await invoke().catch((thrown: unknown) => thrown);
    expect(ToolError.isInstance(error) && error.code).toBe('persistence');
    expect(tool.calls).toEqual([]);
    await expect(run.shutdown()).rejects.toMatchObject({ code: 'persistence' });
    expect((await facts()).map((fact) => fact.kind)).toEqual([
      'invocation_opened',
      'model_requested',
      'model_completed',
    ]);
  });
});
