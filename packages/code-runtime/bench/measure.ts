/** Median of `runs` timings of `fn`, in milliseconds, after `warmup` untimed runs. */
export async function medianMs(
  fn: () => unknown,
  runs: number,
  warmup = Math.ceil(runs / 10),
): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

/** One JSON line per measure, with its ratio to a baseline measured in the same run. */
export function report(entry: {
  measure: string;
  value: number;
  baseline: string;
  baseline_value: number;
  [extra: string]: unknown;
}): void {
  const round = (n: number) => Math.round(n * 10_000) / 10_000;
  console.log(
    JSON.stringify({
      ...entry,
      value: round(entry.value),
      baseline_value: round(entry.baseline_value),
      ratio: round(entry.value / entry.baseline_value),
    }),
  );
}
