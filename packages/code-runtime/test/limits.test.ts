import { afterAll, describe, expect, test } from 'vitest';
import { CellLimits, CodeExecutor } from '../src/index.js';
import { RecordingBridge, sleep } from './helpers.js';

const executor = new CodeExecutor(
  CellLimits.from({
    deadlineMs: 500,
    memoryBytes: 32 * 1024 * 1024,
    maxSourceBytes: 1024,
    maxOutputBytes: 100,
    maxHostCalls: 5,
    maxHostCallsInFlight: 2,
    maxCallInputBytes: 64,
    maxCallOutputBytes: 64,
    maxTimers: 3,
  }),
);
afterAll(() => executor.close());

const bridge = new RecordingBridge({
  echo: async ({ input }) => input,
  slow: async ({ signal }) => sleep(200, signal),
  big: async () => 'x'.repeat(1000),
});

describe('each limit is hit and reported distinctly', () => {
  test('an infinite loop times out at the deadline', async () => {
    const result = await executor.run('while (true) {}');
    expect(result.kind).toBe('timed_out');
    expect(result.durationMs).toBeGreaterThanOrEqual(500);
  });

  test('an infinite loop inside a promise job times out at the deadline', async () => {
    const result = await executor.run('await Promise.resolve(); for (;;) {}');
    expect(result.kind).toBe('timed_out');
  });

  test('a cell waiting on a timer past the deadline times out', async () => {
    const result = await executor.run(
      'await new Promise((resolve) => setTimeout(resolve, 60_000)); text("late")',
    );
    expect(result).toMatchObject({ kind: 'timed_out', output: '' });
  });

  test('many 1 MB strings run out of memory, long before the deadline would matter', async () => {
    const slowExecutor = new CodeExecutor(
      CellLimits.from({ deadlineMs: 20_000, memoryBytes: 32 * 1024 * 1024 }),
    );
    const result = await slowExecutor.run(
      'const all = []; while (true) all.push("x".repeat(1 << 20) + all.length)',
    );
    await slowExecutor.close();
    expect(result.kind).toBe('out_of_memory');
    expect(result.durationMs).toBeLessThan(10_000);
  });

  test('a huge allocation runs out of memory', async () => {
    const result = await executor.run('new ArrayBuffer(1e9)');
    expect(result.kind).toBe('out_of_memory');
  });

  test('deep recursion exceeds the stack limit', async () => {
    const result = await executor.run('function down(n) { return down(n + 1) + 1 } down(0)');
    expect(result).toMatchObject({ kind: 'limit_exceeded', limit: 'stackBytes' });
  });

  test('recursion through native calls exceeds the stack limit too', async () => {
    const result = await executor.run('const o = {}; o.toString = () => "" + o; String(o)');
    expect(result).toMatchObject({ kind: 'limit_exceeded', limit: 'stackBytes' });
  });

  test('an oversized source is refused without running', async () => {
    const result = await executor.run(`text('ran'); // ${'x'.repeat(2000)}`);
    expect(result).toMatchObject({ kind: 'limit_exceeded', limit: 'maxSourceBytes', output: '' });
  });

  test('output past the limit ends the cell and keeps what fit', async () => {
    const result = await executor.run(
      'text("a".repeat(60)); try { text("b".repeat(60)) } catch {} text("c")',
    );
    expect(result).toMatchObject({ kind: 'limit_exceeded', limit: 'maxOutputBytes', output: 'a'.repeat(60) });
  });

  test('console output counts toward the output limit', async () => {
    const result = await executor.run('for (let i = 0; i < 100; i++) console.log("line", i)');
    expect(result).toMatchObject({ kind: 'limit_exceeded', limit: 'maxOutputBytes' });
    expect(result.logs.length).toBeGreaterThan(0);
    expect(result.logs.length).toBeLessThan(100);
  });

  test('too many host calls end the cell', async () => {
    const result = await executor.run('for (let i = 0; i < 10; i++) await tools.echo(i); text("done")', {
      bridge,
    });
    expect(result).toMatchObject({ kind: 'limit_exceeded', limit: 'maxHostCalls', output: '' });
    expect(result.hostCalls).toEqual({ started: 5, settled: 5 });
  });

  test('too many host calls in flight end the cell, after the started ones settle', async () => {
    const result = await executor.run('await Promise.all([tools.slow(), tools.slow(), tools.slow()])', {
      bridge,
    });
    expect(result).toMatchObject({ kind: 'limit_exceeded', limit: 'maxHostCallsInFlight' });
    expect(result.hostCalls).toEqual({ started: 2, settled: 2 });
  });

  test('an oversized call input ends the cell without calling the host', async () => {
    const before = bridge.calls.length;
    const result = await executor.run('try { await tools.echo("y".repeat(100)) } catch {} text("after")', {
      bridge,
    });
    expect(result).toMatchObject({ kind: 'limit_exceeded', limit: 'maxCallInputBytes', output: '' });
    expect(bridge.calls.length).toBe(before);
  });

  test('an oversized call output ends the cell', async () => {
    const result = await executor.run('try { await tools.big() } catch {} text("after")', { bridge });
    expect(result).toMatchObject({ kind: 'limit_exceeded', limit: 'maxCallOutputBytes', output: '' });
    expect(result.hostCalls).toEqual({ started: 1, settled: 1 });
  });

  test('too many pending timers end the cell', async () => {
    const result = await executor.run('for (let i = 0; i < 10; i++) setTimeout(() => {}, 100)');
    expect(result).toMatchObject({ kind: 'limit_exceeded', limit: 'maxTimers' });
  });
});
