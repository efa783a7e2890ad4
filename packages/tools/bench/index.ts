// Tools benchmarks: one JSON line per measure, each against a baseline of the same run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventWrite, type Fact, RuntimeEvent, ToolResult } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { medianMs, report } from '../../../tooling/bench/harness.ts';
import { RunTools, ToolCatalog, ToolHandler } from '../src/index.ts';

const root = mkdtempSync(join(tmpdir(), 'factum-tools-bench-'));
const invocation = { sessionId: 's', turnId: 't', runId: 'r', invocationId: 'i' };
const catalog = new ToolCatalog([
  {
    definition: { name: 'noop', description: 'does nothing', inputSchema: { type: 'object' } },
    handler: ToolHandler.immediate({ names: () => ['noop'], invoke: async () => ({ ok: true }) }),
    nesting: 'nestable',
    semantics: 'parallel',
  },
]);
const code = new CodeExecutor();

async function openLog(name: string): Promise<EventLog> {
  const log = await EventLog.open(join(root, `${name}.sqlite`));
  const opened: Fact = {
    kind: 'invocation_opened',
    input: { kind: 'message', content: 'x', sourceMessages: [] },
  };
  await log.append(EventWrite.plain(RuntimeEvent.create(invocation, opened)));
  return log;
}

let counter = 0;
const nextId = () => {
  counter += 1;
  return `c${counter}`;
};

async function noopVsRawAppends(): Promise<void> {
  const log = await openLog('noop');
  const run = new RunTools({ sink: log, invocation, catalog, mode: 'direct', code });
  const step = (await run.capture('.')).intoStep('step');
  const rounds = 5;
  let ours = 0;
  let raw = 0;
  for (let round = 0; round < rounds; round += 1) {
    ours += await medianMs(200, () => step.invoke({ id: nextId(), name: 'noop', input: {} }));
    raw += await medianMs(200, async () => {
      const id = `raw:${nextId()}`;
      const call = { id, name: 'noop', input: {}, origin: { kind: 'provider' as const, stepId: 'raw' } };
      await log.append(
        EventWrite.plain(RuntimeEvent.create(invocation, { kind: 'tool_dispatched', operationId: id, call })),
      );
      const result = ToolResult.of({ ok: true });
      const settled = RuntimeEvent.create(invocation, {
        kind: 'tool_settled',
        operationId: id,
        outcome: { kind: 'succeeded', result: result.reference() },
      });
      await log.append(EventWrite.withResult(settled, result));
    });
  }
  await run.shutdown();
  await log.close();
  report({
    measure: 'noop_tool_call_ms',
    unit: 'ms (median)',
    value: ours / rounds,
    baseline: 'two plain appends (T1, T2 with its result) to the same log',
    baselineValue: raw / rounds,
    goal: '<= 1.3',
  });
}

async function nestedVsDirect(): Promise<void> {
  const log = await openLog('nested');
  const direct = new RunTools({ sink: log, invocation, catalog, mode: 'direct', code });
  const directStep = (await direct.capture('.')).intoStep('direct');
  const cells = new RunTools({ sink: log, invocation, catalog, mode: 'code_mode', code });
  const cellStep = (await cells.capture('.')).intoStep('cell');
  const calls = 20;
  const loop = `for (let i = 0; i < ${calls}; i += 1) await tools.noop({});`;
  const cell = (source: string) => () =>
    cellStep.invoke({ id: nextId(), name: 'exec', input: { code: source } });
  const empty = await medianMs(15, cell(''));
  const full = await medianMs(15, cell(loop));
  const perNested = (full - empty) / calls;
  const perDirect = await medianMs(200, () => directStep.invoke({ id: nextId(), name: 'noop', input: {} }));
  await direct.shutdown();
  await cells.shutdown();
  await log.close();
  report({
    measure: 'nested_call_ms',
    unit: 'ms per call',
    value: perNested,
    baseline:
      'a direct call of the same tool (a nested call is measured as the added cost of 20 calls in one cell)',
    baselineValue: perDirect,
    goal: '<= 1.5',
  });
}

async function parallelGroupCommit(): Promise<void> {
  const log = await openLog('parallel');
  const run = new RunTools({ sink: log, invocation, catalog, mode: 'direct', code });
  const step = (await run.capture('.')).intoStep('par');
  const eight = await medianMs(60, () =>
    Promise.all(Array.from({ length: 8 }, () => step.invoke({ id: nextId(), name: 'noop', input: {} }))),
  );
  const observed: Fact = {
    kind: 'model_observed',
    stepId: 'x',
    observation: { kind: 'text_delta', text: 'x' },
  };
  const oneCommit = await medianMs(200, () =>
    log.append(EventWrite.plain(RuntimeEvent.create(invocation, observed))),
  );
  await run.shutdown();
  await log.close();
  report({
    measure: 'eight_parallel_noop_tools_ms',
    unit: 'ms (median)',
    value: eight,
    baseline: 'one durable append (one fsync)',
    baselineValue: oneCommit,
    goal: '<= 3',
  });
}

try {
  await noopVsRawAppends();
  await nestedVsDirect();
  await parallelGroupCommit();
} finally {
  await code.close();
  rmSync(root, { recursive: true, force: true });
}
