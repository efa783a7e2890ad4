import { afterAll, describe, expect, test } from 'vitest';
import { CellLimits, CodeExecutor, FatalHostError } from '../src/index.js';
import { RecordingBridge } from './helpers.js';

const executor = new CodeExecutor(CellLimits.from({ deadlineMs: 1_000 }));
afterAll(() => executor.close());

async function probe(expression: string): Promise<string> {
  const result = await executor.run(
    `try { const v = await (async () => ${expression})(); text('reached: ' + typeof v) } catch (e) { text('blocked: ' + e.name) }`,
  );
  if (result.kind !== 'completed') throw new Error(`probe ended ${result.kind}`);
  return result.output;
}

describe('escape attempts find nothing of the host', () => {
  test.each([
    ['process', 'process.env'],
    ['require', 'require("fs")'],
    ['import()', 'import("fs")'],
    ['fetch', 'fetch("http://127.0.0.1")'],
    ['WebAssembly', 'WebAssembly.Module'],
    ['eval', 'eval("1")'],
    ['Function', 'Function("return this")()'],
    ['arrow constructor', '(() => {}).constructor("return this")()'],
    ['async constructor', '(async () => {}).constructor("return 1")()'],
    ['generator constructor', '(function* () {}).constructor("yield 1")()'],
    ['Reflect.construct', 'Reflect.construct(Function, ["return 1"])()'],
    ['globalThis.process', 'globalThis.process.exit()'],
    ['host function via tools', 'tools.constructor.constructor("return process")()'],
  ])('%s is blocked', async (_name, expression) => {
    expect(await probe(expression)).toMatch(/^blocked: /);
  });

  test('the global object holds only the language and the cell API', async () => {
    const result = await executor.run(
      'text(Object.getOwnPropertyNames(globalThis).filter((n) => /^(process|require|module|fetch|WebAssembly|Buffer|eval|__)/.test(n)).join())',
    );
    expect(result).toMatchObject({ kind: 'completed', output: '' });
  });

  test('polluting prototypes and tools reaches neither the host nor the next cell', async () => {
    const bridge = new RecordingBridge({ effect: async ({ input }) => input });
    const first = await executor.run(
      `Object.prototype.polluted = 'yes'; Array.prototype.polluted = 'yes';
       try { tools.effect = () => 'hijacked' } catch {}
       try { Object.getPrototypeOf(tools) } catch {}
       const out = await tools.effect({ a: 1, ['__proto__']: { polluted: 'yes' } });
       text(JSON.stringify(out))`,
      { bridge },
    );
    expect(first.kind).toBe('completed');
    const input = bridge.calls[0]!.input as Record<string, unknown>;
    expect(Object.getPrototypeOf(input)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(input.polluted).toBeUndefined();
    const second = await executor.run('text(String(({}).polluted) + String([].polluted))');
    expect(second).toMatchObject({ kind: 'completed', output: 'undefinedundefined' });
  });
});

describe('the executor survives killed cells', () => {
  test('after a timeout, an out-of-memory, a fatal host failure and a stack overflow, a fresh cell runs fine', async () => {
    const small = new CodeExecutor(CellLimits.from({ deadlineMs: 300, memoryBytes: 24 * 1024 * 1024 }));
    const bridge = new RecordingBridge({ fatal: async () => Promise.reject(new FatalHostError('x')) });
    const kinds = [];
    kinds.push((await small.run('while (true) {}')).kind);
    kinds.push((await small.run('const a = []; while (true) a.push(new Array(1e5).fill(1))')).kind);
    kinds.push(
      (await small.run('await Promise.resolve(); const a = []; while (true) a.push("y".repeat(1 << 20))'))
        .kind,
    );
    kinds.push((await small.run('await tools.fatal()', { bridge })).kind);
    kinds.push((await small.run('const f = (n) => f(n + 1) + 1; f(0)')).kind);
    const fresh = await small.run('text(Object.prototype.polluted === undefined ? "clean" : "dirty")');
    const stats = small.stats;
    await small.close();
    // Out of memory inside a promise job leaves QuickJS unable to free its runtime: that instance is replaced.
    expect(stats.instancesBroken).toBe(1);
    expect(kinds).toEqual(['timed_out', 'out_of_memory', 'out_of_memory', 'fatal', 'limit_exceeded']);
    expect(fresh).toMatchObject({ kind: 'completed', output: 'clean' });
  });

  test('no QuickJS handle leaks: every runtime frees cleanly, whatever the ending', async () => {
    const local = new CodeExecutor(CellLimits.from({ deadlineMs: 300, maxHostCalls: 3 }));
    const controller = new AbortController();
    const bridge = new RecordingBridge({
      ok: async () => ({ fine: true }),
      bad: async () => Promise.reject(new Error('no')),
      fatal: async () => Promise.reject(new FatalHostError('x')),
      hang: async ({ signal }) => new Promise((resolve) => signal.addEventListener('abort', resolve)),
    });
    const sources = [
      'await tools.ok(); text("a")',
      'try { await tools.bad() } catch {}',
      'await tools.fatal()',
      'setTimeout(() => {}, 10_000); await tools.hang()',
      'tools.hang(); tools.hang(); await new Promise(() => {})',
      'for (;;) await tools.ok()',
      'throw new Error("x")',
      'notify("n"); await new Promise((r) => setTimeout(r, 5))',
    ];
    for (const source of sources) await local.run(source, { bridge });
    setTimeout(() => controller.abort(), 20);
    await local.run('await tools.hang()', { bridge, signal: controller.signal });
    const stats = local.stats;
    await local.close();
    expect(stats.cellsRun).toBe(sources.length + 1);
    expect(stats.instancesBroken).toBe(0);
    // Healthy instances are reused, so far fewer instances than cells were created.
    expect(stats.instancesCreated).toBeLessThan(stats.cellsRun);
  });

  test('concurrent cells do not disturb each other', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => executor.run(i === 3 ? 'while (true) {}' : `text(${i} * 2)`)),
    );
    expect(results.map((r) => (r.kind === 'completed' ? r.output : r.kind))).toEqual([
      '0',
      '2',
      '4',
      'timed_out',
      '8',
      '10',
      '12',
      '14',
    ]);
  });
});
