import { closeSync, fdatasyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The benchmark harness every package shares: one JSON line per measure, always with
 * the baseline measured in the same run and the ratio between them, so a figure never
 * stands without its comparison.
 */

/** One measured figure and its same-run baseline. */
export type Measure = {
  readonly measure: string;
  readonly unit: string;
  readonly value: number;
  readonly baseline: string;
  readonly baselineValue: number;
  /** What the issue asks of the ratio, e.g. ">= 0.8" or "<= 1.2". */
  readonly goal?: string;
  /** What the issue asks of the value itself, in its unit, e.g. "<= 5" (a latency ceiling). */
  readonly valueGoal?: string;
  readonly note?: string;
};

/** Prints one measure as a JSON line, with its ratio and whether the goal was met. */
export function report(measure: Measure): void {
  const ratio = measure.baselineValue === 0 ? null : round(measure.value / measure.baselineValue);
  const met = ratio === null || measure.goal === undefined ? undefined : meets(ratio, measure.goal);
  console.log(
    JSON.stringify({
      measure: measure.measure,
      unit: measure.unit,
      value: round(measure.value),
      baseline: measure.baseline,
      baseline_value: round(measure.baselineValue),
      ratio,
      ...(measure.goal === undefined ? {} : { goal: measure.goal, met }),
      ...(measure.valueGoal === undefined
        ? {}
        : { value_goal: measure.valueGoal, value_met: meets(measure.value, measure.valueGoal) }),
      ...(measure.note === undefined ? {} : { note: measure.note }),
    }),
  );
}

function meets(figure: number, goal: string): boolean {
  const [operator, bound] = goal.split(' ') as [string, string];
  return operator === '>=' ? figure >= Number(bound) : figure <= Number(bound);
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** Runs `operation` `count` times in sequence and returns operations per second. */
export async function rate(
  count: number,
  operation: (index: number) => Promise<unknown> | unknown,
): Promise<number> {
  const started = performance.now();
  for (let index = 0; index < count; index += 1) await operation(index);
  return count / ((performance.now() - started) / 1000);
}

/** Milliseconds taken by `operation`, median of `runs`. */
export async function medianMs(runs: number, operation: () => Promise<unknown> | unknown): Promise<number> {
  const samples: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const started = performance.now();
    await operation();
    samples.push(performance.now() - started);
  }
  return percentile(samples, 0.5);
}

/** The p-th percentile (0..1) of samples. */
export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
}

/**
 * The disk's own price, in `directory`: median ms to write 4 KiB and fdatasync it. A
 * durable commit costs at least this; figures that compare a file with memory grow with it.
 */
export function diskSyncMs(directory: string): number {
  const path = join(directory, 'sync-probe');
  const fd = openSync(path, 'w');
  const page = Buffer.alloc(4096, 1);
  const samples: number[] = [];
  try {
    for (let index = 0; index < 50; index += 1) {
      const started = performance.now();
      writeSync(fd, page, 0, page.length, index * page.length);
      fdatasyncSync(fd);
      samples.push(performance.now() - started);
    }
  } finally {
    closeSync(fd);
    rmSync(path, { force: true });
  }
  return round(percentile(samples, 0.5));
}
