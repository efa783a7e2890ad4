import { type ModelToolCall, ToolError } from '@factum/agent-facts';
import { CellLimits, CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { describe, expect, it } from 'vitest';
import { RunTools, ToolCatalog, ToolHandler } from '../src/index.ts';
import {
  type Boundary,
  bounds,
  FaultSink,
  invocation,
  seed,
  temporaryDirectory,
} from './support/fixtures.ts';

const PARENT = 'step:parent';

/** The effect asserts, when it runs, that its own T1 is the last durable event. */
function catalog(log: EventLog, effects: { count: number }): ToolCatalog {
  return new ToolCatalog([
    {
      definition: { name: 'effect', description: 'count one effect', inputSchema: { type: 'object' } },
      handler: ToolHandler.immediate({
        names: () => ['effect'],
        async invoke(_name, input) {
          const prefix = await log.prefix(bounds);
          const last = prefix.events.at(-1)!.event.fact;
          if (last.kind !== 'tool_dispatched' || last.call.origin.kind !== 'code_mode') {
            throw new Error('the effect ran before its own durable T1');
          }
          effects.count += 1;
          return input;
        },
      }),
      nesting: 'nestable',
      semantics: 'parallel',
    },
  ]);
}

const call: ModelToolCall = {
  id: 'parent',
  name: 'exec',
  input: { code: "try { await tools.effect({}); } catch (_) {} text('caught');" },
};

async function checkBoundary(boundary: Exclude<Boundary, 'notification'>): Promise<void> {
  using dir = temporaryDirectory();
  const effects = { count: 0 };
  const expectedEffects = boundary === 'child_settlement' ? 1 : 0;
  const code = new CodeExecutor(CellLimits.default());
  let digest: string;
  let highWater: number;
  const uncertain = [PARENT];
  {
    const log = await EventLog.open(dir.file);
    await seed(log, invocation, [call]);
    const sink = new FaultSink(log, boundary, PARENT);
    const run = new RunTools({ sink, invocation, catalog: catalog(log, effects), mode: 'code_mode', code });
    const step = (await run.capture('.')).intoStep('step');
    const result = await step.invoke(call).catch((error: unknown) => error);
    const shutdown = await run.shutdown().catch((error: unknown) => error);
    expect(ToolError.isInstance(shutdown) && shutdown.code).toBe('persistence');
    expect(ToolError.isInstance(result) && result.code).toBe('persistence');
    expect(sink.faults).toBe(1);
    expect(effects.count).toBe(expectedEffects);
    expect(
      sink.attempts.some((event) => event.fact.kind === 'tool_settled' && event.fact.operationId === PARENT),
      'JS catch must not even attempt parent T2 after a fatal child commit error',
    ).toBe(false);
    const child = sink.attempts.find(
      (event) => event.fact.kind === 'tool_dispatched' && event.fact.call.origin.kind === 'code_mode',
    );
    expect(child, 'real JS invoked the child').toBeDefined();
    const childFact = child!.fact;
    if (childFact.kind !== 'tool_dispatched' || childFact.call.origin.kind !== 'code_mode')
      throw new Error('unreachable');
    const cellId = childFact.call.origin.parentOperationId;
    const cellDispatch = sink.attempts.find(
      (event) => event.fact.kind === 'tool_dispatched' && event.fact.operationId === cellId,
    );
    expect(cellDispatch?.fact).toMatchObject({
      call: { origin: { kind: 'code_cell', parentOperationId: PARENT } },
    });

    const prefix = await log.prefix(bounds);
    expect(prefix.events).toHaveLength(5 + expectedEffects);
    expect(prefix.events.some((stored) => stored.event.fact.kind === 'tool_settled')).toBe(false);
    for (const { event } of prefix.events) {
      if (event.fact.kind === 'tool_dispatched' && event.fact.call.origin.kind === 'code_cell') {
        uncertain.push(event.fact.operationId);
      }
    }
    if (expectedEffects === 1) uncertain.push(childFact.operationId);
    digest = prefix.digest;
    highWater = prefix.highWater;
    await log.close();
  }
  uncertain.sort();
  // Reopen the actual database with no fault injector. Recovery evidence must retain
  // every unresolved dispatch, including the parent when the child's T1 failed.
  const log = await EventLog.open(dir.file);
  const recovery = await log.invocationRecovery(invocation, bounds);
  expect([...recovery.uncertainOperations].sort()).toEqual(uncertain);
  expect(recovery.undispatchedCalls).toEqual([]);
  expect(await log.unfinishedInvocations(32)).toEqual([invocation]);
  const prefix = await log.prefix(bounds);
  expect(prefix.digest).toBe(digest);
  expect(prefix.highWater).toBe(highWater);
  expect(prefix.projectInvocation('invocation').terminal).toBeUndefined();

  // Even explicitly retrying the same accepted provider call cannot replay the cell or
  // its effect: storage refuses a second parent dispatch first.
  const run = new RunTools({
    sink: log,
    invocation,
    catalog: catalog(log, effects),
    mode: 'code_mode',
    code,
  });
  const again = await (await run.capture('.'))
    .intoStep('step')
    .invoke(call)
    .catch((error: unknown) => error);
  expect(ToolError.isInstance(again) && again.code).toBe('persistence');
  expect(effects.count).toBe(expectedEffects);
  expect((await log.prefix(bounds)).digest).toBe(digest);
  await log.close();
  await code.close();
}

describe('commit faults in Code mode', () => {
  it('a notification commit failure stops the cell without fabricating success', async () => {
    using dir = temporaryDirectory();
    const log = await EventLog.open(dir.file);
    const notifyCall: ModelToolCall = {
      id: 'parent',
      name: 'exec',
      input: { code: "notify('progress'); await new Promise(resolve => setTimeout(resolve, 60000));" },
    };
    await seed(log, invocation, [notifyCall]);
    const sink = new FaultSink(log, 'notification', PARENT);
    // A deadline longer than the test's own timeout: only the fatal commit can stop the cell in time.
    const code = new CodeExecutor(CellLimits.from({ deadlineMs: 60_000 }));
    const run = new RunTools({ sink, invocation, catalog: new ToolCatalog(), mode: 'code_mode', code });
    const result = await (await run.capture('.'))
      .intoStep('step')
      .invoke(notifyCall)
      .catch((error: unknown) => error);
    expect(ToolError.isInstance(result) && result.code).toBe('persistence');
    await expect(run.shutdown()).rejects.toMatchObject({ code: 'persistence' });
    expect(sink.faults).toBe(1);
    const kinds = (await log.prefix(bounds)).events.map((stored) => stored.event.fact.kind);
    expect(kinds).not.toContain('tool_settled');
    expect(kinds).not.toContain('tool_notified');
    await log.close();
    await code.close();
  });

  it('a rejected child T1 runs no effect and JS catch cannot settle the parent', async () => {
    await checkBoundary('child_dispatch');
  });

  it('an uncertain child T2 keeps the effect and JS catch cannot settle the parent', async () => {
    await checkBoundary('child_settlement');
  });
});
