import { CodeExecutor } from '@factum/code-runtime';
import type { EventLog } from '@factum/event-log';
import { describe, expect, it } from 'vitest';
import { EXEC_TOOL, RunTools, ToolCatalog, ToolHandler } from '../src/index.ts';
import { invocation, logPerTest, seed, wide } from './support/fixtures.ts';
import { RecordingTool } from './support/recording-tool.ts';

let log: EventLog;
const code = new CodeExecutor();
logPerTest((opened) => {
  log = opened;
});

function catalogOf(tool: RecordingTool): ToolCatalog {
  return new ToolCatalog([
    {
      definition: { name: 'echo', description: 'echo the input', inputSchema: { type: 'object' } },
      handler: ToolHandler.immediate(tool),
      nesting: 'nestable',
      semantics: 'parallel',
      source: { kind: 'mcp', server: 'echoes' },
    },
    {
      definition: { name: 'deploy', description: 'deploy, never from code', inputSchema: { type: 'object' } },
      handler: ToolHandler.immediate(new RecordingTool(log, 'deploy')),
      nesting: 'direct_only',
      semantics: 'exclusive',
    },
  ]);
}

describe('Code mode', () => {
  it('the model sees exec listing the nestable tools, and direct-only tools beside it', async () => {
    const run = new RunTools({
      sink: log,
      invocation,
      catalog: catalogOf(new RecordingTool(log, 'echo')),
      mode: 'code_mode',
      code,
    });
    const specs = (await run.capture('.')).specs;
    expect(specs.map((spec) => spec.name)).toEqual([EXEC_TOOL, 'deploy']);
    expect(specs[0]!.description).toContain('tools.echo(input: {"type":"object"}): echo the input');
    expect(specs[0]!.description).not.toContain('tools.deploy');
  });

  it('every tool call inside a cell is a recorded child call, in protocol order', async () => {
    const tool = new RecordingTool(log, 'echo');
    const source =
      "notify('starting'); const [a, b] = await Promise.all([tools.echo({ n: 1 }), tools.echo({ n: 2 })]); text(a.echoed.n + b.echoed.n);";
    const call = { id: 'x', name: EXEC_TOOL, input: { code: source } };
    await seed(log, invocation, [call]);
    const run = new RunTools({ sink: log, invocation, catalog: catalogOf(tool), mode: 'code_mode', code });
    const result = await (await run.capture('.')).intoStep('step').invoke(call);
    await run.shutdown();
    expect(result.json()).toEqual({ output: '3' });
    expect(tool.calls.every((entry) => entry.lastDurableKind === 'tool_dispatched')).toBe(true);
    const facts = (await log.prefix(wide)).events.slice(3).map((stored) => stored.event.fact);
    const summary = facts.map((fact) =>
      'operationId' in fact ? `${fact.kind} ${fact.operationId}` : fact.kind,
    );
    expect(summary.slice(0, 3)).toEqual([
      'tool_dispatched step:x',
      'tool_dispatched step:x#cell',
      'tool_notified step:x#cell',
    ]);
    expect(summary.slice(-2)).toEqual(['tool_settled step:x#cell', 'tool_settled step:x']);
    const children = summary.filter((line) => line.includes('#cell/'));
    expect(children.sort()).toEqual([
      'tool_dispatched step:x#cell/c0',
      'tool_dispatched step:x#cell/c1',
      'tool_settled step:x#cell/c0',
      'tool_settled step:x#cell/c1',
    ]);
    expect(
      facts.find((fact) => fact.kind === 'tool_dispatched' && fact.operationId === 'step:x#cell/c0'),
    ).toMatchObject({
      call: { origin: { kind: 'code_mode', parentOperationId: 'step:x#cell' } },
      // Where the tool came from is recorded on its dispatch, inside a cell too.
      source: { kind: 'mcp', server: 'echoes' },
    });
    const exec = facts.find((fact) => fact.kind === 'tool_dispatched' && fact.operationId === 'step:x');
    expect(exec).not.toHaveProperty('source');
  });

  it('a direct-only tool called from a cell is rejected there, catchably, and does not run', async () => {
    const call = {
      id: 'y',
      name: EXEC_TOOL,
      input: { code: "try { await tools.deploy({}) } catch (e) { text('refused') }" },
    };
    await seed(log, invocation, [call]);
    const run = new RunTools({
      sink: log,
      invocation,
      catalog: catalogOf(new RecordingTool(log, 'echo')),
      mode: 'code_mode',
      code,
    });
    const result = await (await run.capture('.')).intoStep('step').invoke(call);
    await run.shutdown();
    expect(result.json()).toEqual({ output: 'refused' });
  });

  it('cancelling while a cell awaits a tool lets the dispatched effect finish and settle, then ends the cell cancelled', async () => {
    const tool = new RecordingTool(log, 'echo');
    tool.hold();
    const call = {
      id: 'z',
      name: EXEC_TOOL,
      input: { code: "await tools.echo({ n: 1 }); text('unreachable')" },
    };
    await seed(log, invocation, [call]);
    const run = new RunTools({ sink: log, invocation, catalog: catalogOf(tool), mode: 'code_mode', code });
    const controller = new AbortController();
    const pending = (await run.capture('.')).intoStep('step').invoke(call, controller.signal);
    while (tool.running === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    setTimeout(() => tool.release(), 20);
    await expect(pending).rejects.toMatchObject({ code: 'cancelled' });
    await run.shutdown();
    const facts = (await log.prefix(wide)).events.map((stored) => stored.event.fact);
    const child = facts.find((fact) => fact.kind === 'tool_settled' && fact.operationId === 'step:z#cell/c0');
    expect(child).toMatchObject({ outcome: { kind: 'succeeded' } });
    expect(facts.at(-1)).toMatchObject({
      kind: 'tool_settled',
      operationId: 'step:z',
      outcome: { kind: 'failed', error: { code: 'cancelled' } },
    });
    expect((await log.invocationRecovery(invocation, wide)).uncertainOperations).toEqual([]);
  });

  it('a JS error in the cell settles the cell and the parent as failed with its line', async () => {
    const call = { id: 'w', name: EXEC_TOOL, input: { code: "const x = 1;\nthrow new Error('boom');" } };
    await seed(log, invocation, [call]);
    const run = new RunTools({ sink: log, invocation, catalog: new ToolCatalog(), mode: 'code_mode', code });
    await expect((await run.capture('.')).intoStep('step').invoke(call)).rejects.toMatchObject({
      code: 'failed',
    });
    await run.shutdown();
    const last = (await log.prefix(wide)).events.at(-1)!.event.fact;
    expect(last).toMatchObject({
      kind: 'tool_settled',
      outcome: { kind: 'failed', error: { code: 'cell_failed' } },
    });
    expect(JSON.stringify(last)).toContain('boom');
  });
});
