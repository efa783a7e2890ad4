import { afterAll, describe, expect, test } from 'vitest';
import {
  type CellBridge,
  CellLimits,
  CellTerminatedError,
  CodeExecutor,
  FatalHostError,
} from '../src/index.js';
import { RecordingBridge, sleep } from './helpers.js';

const executor = new CodeExecutor(CellLimits.from({ deadlineMs: 2_000 }));
afterAll(() => executor.close());

describe('the host bridge', () => {
  test('top-level await of a host call resolves into JS as JSON data', async () => {
    const bridge = new RecordingBridge({
      add: async ({ input }) => ({ sum: (input as { a: number; b: number }).a + 2 }),
    });
    const result = await executor.run(
      'const r = await tools.add({ a: 1, b: 2 }); text(r.sum); text("done")',
      {
        bridge,
      },
    );
    expect(result).toMatchObject({
      kind: 'completed',
      output: '3\ndone',
      hostCalls: { started: 1, settled: 1 },
    });
    expect(bridge.calls[0]).toMatchObject({ name: 'add', input: { a: 1, b: 2 }, index: 0 });
  });

  test('Promise.all of host calls runs them concurrently and keeps their order', async () => {
    let inFlight = 0;
    let peak = 0;
    const bridge = new RecordingBridge({
      wait: async ({ input }) => {
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        await sleep(20);
        inFlight -= 1;
        return input;
      },
    });
    const result = await executor.run(
      'text((await Promise.all([1, 2, 3, 4].map((n) => tools.wait(n)))).join(","))',
      {
        bridge,
      },
    );
    expect(result).toMatchObject({
      kind: 'completed',
      output: '1,2,3,4',
      hostCalls: { started: 4, settled: 4 },
    });
    expect(peak).toBe(4);
  });

  test('a non-fatal host failure is a catchable JS error', async () => {
    const bridge = new RecordingBridge({ fail: async () => Promise.reject(new Error('disk full')) });
    const result = await executor.run(
      'try { await tools.fail({}) } catch (e) { text(e.name + ": " + e.message) } finally { text("finally") }',
      { bridge },
    );
    expect(result).toMatchObject({ kind: 'completed', output: 'HostError: disk full\nfinally' });
  });

  test('an uncaught non-fatal host failure fails the cell with its line', async () => {
    const bridge = new RecordingBridge({ fail: async () => Promise.reject(new Error('nope')) });
    const result = await executor.run('text("a")\nawait tools.fail({})', { bridge });
    expect(result).toMatchObject({
      kind: 'failed',
      error: { name: 'HostError', message: 'nope' },
      output: 'a',
    });
  });

  test('a fatal host failure terminates the cell: catch and finally never run, later text is never recorded', async () => {
    const cause = new FatalHostError('could not record the call');
    const bridge = new RecordingBridge({
      effect: async () => Promise.reject(cause),
      after: async () => 'never',
    });
    const result = await executor.run(
      'text("before"); try { await tools.effect({}) } catch (_) { text("caught"); await tools.after() } finally { text("finally") } text("after")',
      { bridge },
    );
    expect(result).toMatchObject({
      kind: 'fatal',
      call: { kind: 'tool', name: 'effect', index: 0 },
      output: 'before',
      hostCalls: { started: 1, settled: 1 },
    });
    expect(result.kind === 'fatal' && result.cause).toBe(cause);
    expect(bridge.calls.map((call) => call.name)).toEqual(['effect']);
  });

  test('a fatal failure aborts the other host calls in flight and awaits them before returning', async () => {
    let settledAfterAbort = false;
    const bridge = new RecordingBridge({
      fatal: async () => {
        await sleep(10);
        throw new FatalHostError('commit failed');
      },
      slow: async ({ signal }) => {
        await sleep(5_000, signal);
        await sleep(30);
        settledAfterAbort = signal.aborted && signal.reason instanceof CellTerminatedError;
      },
    });
    const result = await executor.run('await Promise.all([tools.slow(), tools.fatal()])', { bridge });
    expect(settledAfterAbort).toBe(true);
    expect(result).toMatchObject({
      kind: 'fatal',
      call: { name: 'fatal', index: 1 },
      hostCalls: { started: 2, settled: 2 },
    });
  });

  test('notify reaches the bridge in order and is reported', async () => {
    const seen: string[] = [];
    const bridge: CellBridge = {
      tools: [],
      call: async () => undefined,
      notify: async ({ message }) => {
        await sleep(5);
        seen.push(message);
      },
    };
    const result = await executor.run('notify("one"); notify({ step: 2 }); text("ok")', { bridge });
    expect(result).toMatchObject({
      kind: 'completed',
      notifications: ['one', '{"step":2}'],
      hostCalls: { started: 2, settled: 2 },
    });
    expect(seen).toEqual(['one', '{"step":2}']);
  });

  test('a fatal notify failure terminates a cell that is waiting on a timer', async () => {
    const bridge: CellBridge = {
      tools: [],
      call: async () => undefined,
      notify: async () => Promise.reject(new FatalHostError('notification commit failed')),
    };
    const result = await executor.run(
      'notify("progress"); try { await new Promise((resolve) => setTimeout(resolve, 60_000)) } finally { text("finally") }',
      { bridge },
    );
    expect(result).toMatchObject({
      kind: 'fatal',
      call: { kind: 'notify', name: 'notify', index: 0 },
      output: '',
    });
    expect(result.durationMs).toBeLessThan(1_000);
  });

  test('cancelling before the start runs nothing', async () => {
    const bridge = new RecordingBridge({ effect: async () => 'x' });
    const result = await executor.run('await tools.effect({})', { bridge, signal: AbortSignal.abort() });
    expect(result).toMatchObject({
      kind: 'cancelled',
      phase: 'before',
      hostCalls: { started: 0, settled: 0 },
    });
    expect(bridge.calls).toHaveLength(0);
  });

  test('cancelling during a host call aborts its signal and returns only after it settled', async () => {
    const events: string[] = [];
    const controller = new AbortController();
    const bridge = new RecordingBridge({
      wait: async ({ signal }) => {
        events.push('started');
        setTimeout(() => controller.abort(), 10);
        await sleep(5_000, signal);
        events.push(signal.aborted ? 'aborted' : 'not aborted');
        await sleep(20);
        events.push('settled');
      },
    });
    const result = await executor.run('try { await tools.wait() } finally { text("finally") }', {
      bridge,
      signal: controller.signal,
    });
    events.push('returned');
    expect(result).toMatchObject({
      kind: 'cancelled',
      phase: 'during',
      output: '',
      hostCalls: { started: 1, settled: 1 },
    });
    expect(events).toEqual(['started', 'aborted', 'settled', 'returned']);
  });

  test('an unknown tool is a catchable TypeError and reaches no host', async () => {
    const bridge = new RecordingBridge({ known: async () => 1 });
    const result = await executor.run('text(typeof tools.unknown); text(Object.keys(tools).join())', {
      bridge,
    });
    expect(result).toMatchObject({ kind: 'completed', output: 'undefined\nknown' });
  });

  test('a syntax error fails the cell with its line', async () => {
    const result = await executor.run('const a = 1;\nconst b = ;');
    expect(result).toMatchObject({ kind: 'failed', error: { name: 'SyntaxError', line: 2 } });
  });

  test('setTimeout and clearTimeout work inside the deadline', async () => {
    const result = await executor.run(
      'const id = setTimeout(() => text("cleared"), 5); clearTimeout(id); await new Promise((r) => setTimeout(r, 20, 1)); text("waited")',
    );
    expect(result).toMatchObject({ kind: 'completed', output: 'waited' });
  });
});
