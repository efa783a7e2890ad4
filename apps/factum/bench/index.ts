// The app's benchmark: how fast the built `factum` starts, against bare Node in the same run.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { report } from '../../../tooling/bench/harness.ts';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
if (!existsSync(cli)) throw new Error(`${cli} is missing: build the app first (pnpm --filter factum build)`);

/** Median wall time of `node <args>` over `runs` runs, after one warm-up. */
function median(args: string[], runs: number): number {
  const times: number[] = [];
  for (let run = 0; run <= runs; run += 1) {
    const started = performance.now();
    const result = spawnSync(process.execPath, args, { stdio: 'ignore' });
    if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status}`);
    if (run > 0) times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

const runs = 15;
const bare = median(['-e', '0'], runs);
const version = median([cli, '--version'], runs);
report({
  measure: 'cli_start',
  unit: 'ms',
  value: version,
  baseline: 'node -e 0',
  baselineValue: bare,
  goal: '<= 3',
  note: `median of ${runs} runs of \`factum --version\` (dist/cli.js)`,
});
// Not a goal of the issue: what a command that opens the runtime costs to start.
const help = median([cli, '--help'], runs);
report({
  measure: 'cli_help',
  unit: 'ms',
  value: help,
  baseline: 'node -e 0',
  baselineValue: bare,
  note: `median of ${runs} runs of \`factum --help\`: every command module loaded`,
});

// What the trust boundary costs (a checked read, a sandboxed command), in the same run.
await import('./trust-boundary.ts');
