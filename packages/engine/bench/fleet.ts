// PostgreSQL fleet: 1, 2 and 4 writer processes × 16 sessions each on one database;
// aggregate durable facts per second against one process. Rounds interleave the three
// fleet sizes so that a loaded machine hits them alike; medians are reported, with where
// each batch's time went (waiting for the chain's lock, holding it) and how busy the
// machine's cores were.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventLog } from '@factum/event-log';
import type { TestStoreFactory } from '@factum/event-log/testing';
import { report } from '../../../tooling/bench/harness.ts';

const writer = fileURLToPath(new URL('./fleet-writer.ts', import.meta.url));
const durationMs = Number(process.env.FACTUM_BENCH_FLEET_MS ?? 4000);
const rounds = Number(process.env.FACTUM_BENCH_FLEET_ROUNDS ?? 3);
const sizes = [1, 2, 4] as const;

/** What one writer process measured over the timed window. */
type WriterStats = { cpuMs: number; batches: number; facts: number; waitMs: number; holdMs: number };

/** One fleet run: aggregate facts/s, per-batch lock figures and the machine's busy cores. */
type FleetRun = {
  perSecond: number;
  batchFacts: number;
  waitMs: number;
  holdMs: number;
  writerCores: number;
  busyCores: number;
};

async function runFleet(postgres: TestStoreFactory, processes: number): Promise<FleetRun> {
  await using store = await postgres.create();
  await (await EventLog.open(store.target)).close();
  const dir = mkdtempSync(join(tmpdir(), 'factum-fleet-'));
  const gate = join(dir, 'gate');
  try {
    const children = Array.from({ length: processes }, (_, n) => {
      const child = spawn(
        'node',
        [
          '--conditions=@factum/source',
          '--import',
          'tsx',
          writer,
          JSON.stringify(store.target),
          `w${n}`,
          '16',
          String(durationMs),
          gate,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
      });
      const ready = new Promise<void>((resolve, reject) => {
        child.stdout.on('data', () => text.includes('ready') && resolve());
        child.on('close', () => reject(new Error(`writer ${n} exited before it was ready`)));
      });
      const done = new Promise<{ count: number; stats: WriterStats }>((resolve, reject) => {
        child.on('close', () => {
          const count = /count (\d+)/.exec(text);
          const stats = /stats (\{.*\})/.exec(text);
          if (count === null || stats === null) reject(new Error(`writer ${n} reported nothing: ${text}`));
          else resolve({ count: Number(count[1]), stats: JSON.parse(stats[1]!) as WriterStats });
        });
      });
      return { ready, done };
    });
    await Promise.all(children.map((child) => child.ready));
    const cpuBefore = machineCpu();
    writeFileSync(gate, '');
    const results = await Promise.all(children.map((child) => child.done));
    const cpu = machineCpu();
    const sum = (pick: (stats: WriterStats) => number) =>
      results.reduce((total, result) => total + pick(result.stats), 0);
    const batches = Math.max(
      1,
      sum((stats) => stats.batches),
    );
    return {
      perSecond: results.reduce((total, result) => total + result.count, 0) / (durationMs / 1000),
      batchFacts: sum((stats) => stats.facts) / batches,
      waitMs: sum((stats) => stats.waitMs) / batches,
      holdMs: sum((stats) => stats.holdMs) / batches,
      writerCores: sum((stats) => stats.cpuMs) / durationMs,
      busyCores: (cpu.busy - cpuBefore.busy) / ((cpu.total - cpuBefore.total) / cpu.cores),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The machine's CPU time so far (all cores, in clock ticks), from /proc/stat. */
function machineCpu(): { busy: number; total: number; cores: number } {
  const lines = readFileSync('/proc/stat', 'utf8').split('\n');
  const [, ...fields] = lines[0]!.trim().split(/\s+/);
  const ticks = fields.map(Number);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  const total = ticks.reduce((sum, tick) => sum + tick, 0);
  const cores = lines.filter((line) => /^cpu\d/.test(line)).length;
  return { busy: total - idle, total, cores };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function describe(run: FleetRun): string {
  return `${run.perSecond.toFixed(0)}/s, ${run.batchFacts.toFixed(1)} facts/batch, lock wait ${run.waitMs.toFixed(2)} ms + hold ${run.holdMs.toFixed(2)} ms per batch, writers ${run.writerCores.toFixed(2)} cores, machine ${run.busyCores.toFixed(2)} cores busy`;
}

/** Reports `pg_fleet_2` and `pg_fleet_4`: aggregate facts/s of N writer processes ÷ one. */
export async function fleet(postgres: TestStoreFactory): Promise<void> {
  const runs = new Map<number, FleetRun[]>(sizes.map((size) => [size, []]));
  for (let round = 0; round < rounds; round += 1) {
    for (const size of sizes) runs.get(size)!.push(await runFleet(postgres, size));
  }
  const singles = runs.get(1)!;
  const one = median(singles.map((run) => run.perSecond));
  for (const processes of [2, 4]) {
    const all = runs.get(processes)!;
    const value = median(all.map((run) => run.perSecond));
    const ratios = all.map((run, index) => run.perSecond / singles[index]!.perSecond);
    // The round whose ratio is the median: where its batches' time went, both sides.
    const middle = ratios.indexOf([...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)]!);
    report({
      measure: `pg_fleet_${processes}`,
      unit: `durable facts/s, ${processes} writer processes × 16 sessions`,
      value,
      baseline: 'one writer process × 16 sessions on the same PostgreSQL server',
      baselineValue: one,
      goal: '>= 1',
      note: `medians of ${rounds} interleaved rounds of ${durationMs} ms; per-round ratios ${ratios.map((ratio) => ratio.toFixed(2)).join(' ')}; median round: 1 process ${describe(singles[middle]!)}; ${processes} processes ${describe(all[middle]!)}`,
    });
  }
}
