import { afterAll, describe, expect, test } from 'vitest';
import { type CellBridge, CellLimits, type CellResult, CodeExecutor } from '../src/index.js';

// A corpus of escape attempts. Each is refused (a typed failure) or contained within the
// cell's limits; the host process is unaffected and the next cell starts clean.

const executor = new CodeExecutor(
  CellLimits.from({ deadlineMs: 750, memoryBytes: 32 * 1024 * 1024, maxOutputBytes: 4096 }),
);
afterAll(() => executor.close());

const received: unknown[] = [];
const bridge: CellBridge = {
  tools: ['probe', 'fail'],
  async call({ name, input }) {
    received.push(input);
    if (name === 'fail') throw new Error('host failure');
    return { echoed: input };
  },
};

const stopped = ['failed', 'timed_out', 'limit_exceeded', 'out_of_memory'] as const;
type Case = readonly [name: string, source: string, allowed: readonly CellResult['kind'][], output?: RegExp];

/** Output that names nothing of the host: no paths, no Node internals, no host source. */
const hostFree = /^(?![\s\S]*(\/work\/|node:|file:|process\.|require\(|executeQuery|quickjs))/;

// `text()` a probe's finding: a completed cell must show it found nothing of the host.
const corpus: readonly Case[] = [
  [
    'constructor chain from a host function',
    'text(typeof tools.probe.constructor.constructor("return typeof process")())',
    ['completed', ...stopped],
    /^(undefined|string)$/,
  ],
  [
    'constructor chain from a host error',
    'try { await tools.fail({}) } catch (e) { text(e.constructor.constructor("return typeof process + typeof require")()) }',
    ['completed', ...stopped],
    /^undefinedundefined$/,
  ],
  [
    'constructor chain from a host result',
    'const r = await tools.probe({}); text(r.constructor.constructor("return typeof process")())',
    ['completed', ...stopped],
    /^undefined$/,
  ],
  [
    '__proto__ in a tool input',
    'await tools.probe(JSON.parse(\'{"__proto__":{"polluted":1}}\')); text("sent")',
    ['completed', ...stopped],
    /^sent$/,
  ],
  [
    'Object.prototype pollution before a host call',
    'Object.prototype.polluted = 1; Object.prototype.toJSON = function () { return "hijacked" }; await tools.probe({ a: 1 }); text("sent")',
    ['completed', ...stopped],
    /^sent$/,
  ],
  ['dynamic import', 'await import("node:fs")', stopped],
  ['import of a data URL', 'await import("data:text/javascript,export default 1")', stopped],
  ['require', 'require("child_process")', stopped],
  ['catastrophic backtracking', '/^(a+)+$/.test("a".repeat(40) + "b")', ['timed_out']],
  [
    'catastrophic backtracking in a replace',
    '"x".repeat(30).replace(/(x+x+)+y/, "")',
    ['timed_out', 'completed'],
  ],
  ['deep recursion', 'const f = (n) => f(n + 1) + 1; f(0)', stopped],
  [
    'deep recursion through JSON.stringify',
    'let o = {}; for (let i = 0; i < 1e6; i++) o = { o }; JSON.stringify(o)',
    stopped,
  ],
  ['deep recursion through toString', 'const o = {}; o.toString = () => String(o); String(o)', stopped],
  [
    'a Proxy input whose get trap spins',
    'await tools.probe(new Proxy({}, { get() { for (;;) {} }, ownKeys() { for (;;) {} } }))',
    stopped,
  ],
  [
    'a Proxy input whose ownKeys trap throws',
    'await tools.probe(new Proxy({}, { ownKeys() { throw new Error("trap") } }))',
    stopped,
  ],
  [
    'a revoked Proxy as input',
    'const { proxy, revoke } = Proxy.revocable({}, {}); revoke(); await tools.probe(proxy)',
    stopped,
  ],
  // text() writes objects as JSON inside the cell: the traps are never reached by the host.
  [
    'Symbol.toPrimitive that throws, in text()',
    'text({ [Symbol.toPrimitive]() { throw new Error("prim") } })',
    ['completed', ...stopped],
    /^\{\}$/,
  ],
  [
    'an inspect symbol on a value sent to the host',
    'await tools.probe({ [Symbol.for("nodejs.util.inspect.custom")]: () => { throw new Error("x") } }); text("sent")',
    ['completed', ...stopped],
    /^sent$/,
  ],
  ['a thrown object whose message getter spins', 'throw { get message() { for (;;) {} } }', stopped],
  [
    'a thrown object whose name getter throws',
    'throw { get name() { throw new Error("inner") }, message: "m" }',
    stopped,
  ],
  [
    'an error whose stack getter spins',
    'const e = new Error("x"); Object.defineProperty(e, "stack", { get() { for (;;) {} } }); throw e',
    stopped,
  ],
  ['a thrown Proxy', 'throw new Proxy(new Error("x"), { get() { for (;;) {} } })', stopped],
  ['toJSON that spins on a tool input', 'await tools.probe({ toJSON() { for (;;) {} } })', stopped],
  [
    'toJSON that throws on a tool input',
    'await tools.probe({ toJSON() { throw new Error("json") } })',
    stopped,
  ],
  [
    'valueOf/toString that spin in text()',
    'text({ toString() { for (;;) {} }, valueOf() { for (;;) {} } })',
    ['completed', ...stopped],
    /^\{\}$/,
  ],
  ['a BigInt sent to the host', 'await tools.probe({ n: 10n })', ['completed', ...stopped]],
  ['a cyclic value sent to the host', 'const o = {}; o.o = o; await tools.probe(o)', stopped],
  [
    'a thenable returned by the cell',
    'return { then() { for (;;) {} } }',
    ['timed_out', 'completed', 'failed'],
  ],
  [
    'a thenable tool input',
    'await tools.probe({ then(resolve) { resolve(1) } }); text("sent")',
    ['completed', ...stopped],
  ],
  // await uses the engine's own PerformPromiseThen: the replaced method only hurts the cell.
  [
    'Promise.prototype.then replaced',
    'Promise.prototype.then = function () { for (;;) {} }; await tools.probe({}); text("sent")',
    ['completed', ...stopped],
    /^sent$/,
  ],
  ['a promise that never settles', 'await new Promise(() => {})', stopped],
  [
    'Error.prepareStackTrace reading call sites',
    'Error.prepareStackTrace = (e, frames) => frames.map((f) => [typeof f.getThis?.(), f.getFileName?.(), String(f.getFunction?.())].join(" ")).join(";"); text({ toJSON() { return new Error("x").stack } })',
    ['completed', ...stopped],
    hostFree,
  ],
  ['structuredClone', 'structuredClone({})', stopped],
  [
    'Atomics.wait blocking the host thread',
    'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)',
    stopped,
  ],
  ['a huge SharedArrayBuffer', 'new SharedArrayBuffer(1 << 30)', stopped],
  // The bridge's wrappers are the cell's own prelude: their source may show, the host's may not.
  [
    'Function.prototype.toString of host functions',
    'text([tools.probe, text, notify, setTimeout, console.log].map((f) => Function.prototype.toString.call(f)).join("|"))',
    ['completed', ...stopped],
    hostFree,
  ],
  [
    'globalThis enumeration for host objects',
    'text(Object.getOwnPropertyNames(globalThis).filter((n) => /^(process|require|Buffer|global|module|exports|__dirname|__filename)$/.test(n)).join())',
    ['completed'],
    /^$/,
  ],
  ['an output flood', 'for (;;) text("x".repeat(1000))', ['limit_exceeded', 'timed_out']],
  ['a timer flood', 'for (let i = 0; i < 1e5; i++) setTimeout(() => {}, 1e9)', stopped],
  ['an allocation bomb', 'const a = []; for (;;) a.push(new ArrayBuffer(1 << 20))', stopped],
  ['eval of the host scope', 'text(typeof eval("this.process"))', ['completed', ...stopped], /^undefined$/],
];

describe('sandbox escape attempts', () => {
  const hostThen = Promise.prototype.then;
  const hostPrepare = Error.prepareStackTrace;
  const hostStringify = JSON.stringify;

  const cases = corpus.map(([name, source, allowed, output]) => ({ name, source, allowed, output }));
  test.each(cases)('$name is refused or contained', async ({ source, allowed, output }) => {
    const result = await executor.run(source, { bridge });
    expect(allowed, `${result.kind}: ${JSON.stringify(result)}`).toContain(result.kind);
    if (result.kind === 'completed' && output) expect(result.output).toMatch(output);
    // The host is unaffected ...
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.hasOwn(Object.prototype, 'toJSON')).toBe(false);
    expect(Promise.prototype.then).toBe(hostThen);
    expect(Error.prepareStackTrace).toBe(hostPrepare);
    expect(JSON.stringify).toBe(hostStringify);
    for (const input of received.splice(0)) {
      if (typeof input === 'object' && input !== null) {
        expect([Object.prototype, Array.prototype, null]).toContain(Object.getPrototypeOf(input));
      }
    }
    // ... and the next cell starts clean.
    const next = await executor.run(
      'text([typeof ({}).polluted, typeof Object.prototype.toJSON, String(Promise.prototype.then).includes("native"), typeof Error.prepareStackTrace].join())',
    );
    expect(next).toMatchObject({ kind: 'completed', output: 'undefined,undefined,true,undefined' });
  });
});
