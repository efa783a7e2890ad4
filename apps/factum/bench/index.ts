// The app's benchmark: how fast the built `factum` starts, against bare Node in the same run.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
// No goals: `--help` loads the command modules and none of the runtime; `log` opens the
// SQLite log alone (an empty one here), without the engine or the model client.
const help = median([cli, '--help'], runs);
report({
  measure: 'cli_help',
  unit: 'ms',
  value: help,
  baseline: 'node -e 0',
  baselineValue: bare,
  note: `median of ${runs} runs of \`factum --help\`: the command modules, none of the runtime`,
});
const dir = mkdtempSync(join(tmpdir(), 'factum-bench-cli-'));
try {
  const log = median([cli, 'log', '--dir', join(dir, '.factum')], runs);
  report({
    measure: 'cli_log',
    unit: 'ms',
    value: log,
    baseline: 'node -e 0',
    baselineValue: bare,
    note: `median of ${runs} runs of \`factum log\` on an empty log: the log alone, no engine`,
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}

// What the trust boundary costs (a checked read, a sandboxed command), in the same run.
await import('./trust-boundary.ts');
