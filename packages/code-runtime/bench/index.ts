import variantModule from '@jitl/quickjs-ng-wasmfile-release-sync';
import { newQuickJSWASMModuleFromVariant, type QuickJSSyncVariant } from 'quickjs-emscripten-core';
import { CellLimits, CodeExecutor } from '../src/index.js';
import { medianMs, report } from './measure.js';

const variant = ('default' in variantModule ? variantModule.default : variantModule) as QuickJSSyncVariant;

// Baseline for cell start: the bare QuickJS work a cell cannot avoid.
const quickjs = await newQuickJSWASMModuleFromVariant(variant);
const bare = await medianMs(() => {
  const runtime = quickjs.newRuntime();
  const context = runtime.newContext();
  context.unwrapResult(context.evalCode('1 + 1')).dispose();
  context.dispose();
  runtime.dispose();
}, 2_000);

const executor = new CodeExecutor(CellLimits.from({ maxHostCalls: 1_000 }));
const cell = await medianMs(() => executor.run('text(1 + 1)'), 2_000);
report({
  measure: 'cell_start_p50_ms',
  value: cell,
  baseline: 'bare QuickJS context create+eval+dispose',
  baseline_value: bare,
});

// Host round trip: 1,000 awaited host calls in one cell, per call.
const bridge = { tools: ['echo'], call: async ({ input }: { input: unknown }) => input };
const calls = 1_000;
const cellCalls = await medianMs(
  () => executor.run('for (let i = 0; i < 1000; i++) await tools.echo(i)', { bridge }),
  30,
);
const echo = async (value: unknown) => value;
const plainChain = await medianMs(async () => {
  for (let i = 0; i < calls; i++) await echo(JSON.parse(JSON.stringify(i)));
}, 30);
report({
  measure: 'host_round_trip_us',
  value: (cellCalls * 1_000) / calls,
  baseline: 'plain async function call chain with a JSON round trip, per call',
  baseline_value: (plainChain * 1_000) / calls,
});

// 100 concurrent cells, each waiting on a host call and allocating a little memory.
const concurrent = 100;
const slowBridge = {
  tools: ['wait'],
  call: () => new Promise((resolve) => setTimeout(resolve, 20)),
};
const source =
  'const data = Array.from({ length: 10_000 }, (_, i) => ({ i })); await tools.wait(); text(data.length)';
const rssBefore = process.memoryUsage().rss;
let peakRss = rssBefore;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 5);
const many = new CodeExecutor();
const start = performance.now();
const results = await Promise.all(
  Array.from({ length: concurrent }, () => many.run(source, { bridge: slowBridge })),
);
const wall = performance.now() - start;
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage().rss);
const completed = results.filter((r) => r.kind === 'completed').length;
const sequentialOne = await medianMs(() => many.run(source, { bridge: slowBridge }), 10);
report({
  measure: 'concurrent_100_cells_wall_ms',
  value: wall,
  baseline: 'one such cell alone (p50)',
  baseline_value: sequentialOne,
  completed,
  peak_rss_mb: Math.round(peakRss / 2 ** 20),
  rss_before_mb: Math.round(rssBefore / 2 ** 20),
  memory_bound_mb: (concurrent * many.limits.memoryBytes) / 2 ** 20,
});
await many.close();
await executor.close();
