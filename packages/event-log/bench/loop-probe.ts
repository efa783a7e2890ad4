import { monitorEventLoopDelay } from 'node:perf_hooks';
import { percentile } from '../../../tooling/bench/harness.ts';

/** What a probe saw: how late its 1 ms timers fired, and how many it got. */
export type ProbeReport = {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
};

/**
 * Measures how long the event loop stays blocked: a 1 ms timer re-armed from its own
 * callback, recording how much later than asked each one fires (the gap minus 1 ms).
 * `monitorEventLoopDelay` gives the same figure but says nothing when it took no
 * samples, which is how this benchmark once reported 0.001 ms; the sample count is
 * returned so a figure never stands without it.
 */
export function startLoopProbe(): { stop(): ProbeReport & { histogramCount: number; histogramP99: number } } {
  const lateness: number[] = [];
  let last = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    const now = performance.now();
    lateness.push(Math.max(0, now - last - 1));
    last = now;
    timer = setTimeout(tick, 1);
  };
  timer = setTimeout(tick, 1);
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  return {
    stop() {
      clearTimeout(timer);
      histogram.disable();
      return {
        count: lateness.length,
        p50: percentile(lateness, 0.5),
        p99: percentile(lateness, 0.99),
        max: Math.max(0, ...lateness),
        histogramCount: histogram.count,
        // The histogram records whole intervals (resolution included): subtract it.
        histogramP99: histogram.count === 0 ? Number.NaN : Math.max(0, histogram.percentile(99) / 1e6 - 1),
      };
    },
  };
}

/** Probes an idle loop for `ms`: the machine's own noise, the baseline of a delay figure. */
export async function idleProbe(ms: number): Promise<ProbeReport> {
  const probe = startLoopProbe();
  await new Promise((resolve) => setTimeout(resolve, ms));
  return probe.stop();
}
