// lease_overhead: 64 writers' group-commit throughput on one SQLite log, with and without
// a host lease (stamped writes, owner checked in every batch), alternating rounds.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventWrite, type Fact, RuntimeEvent } from '@factum/agent-facts';
import { EventLog } from '@factum/event-log';
import { percentile, report } from '../../../tooling/bench/harness.ts';

const writers = 64;
const perWriter = 60;

async function throughput(target: string, leased: boolean): Promise<number> {
  const log = await EventLog.open(target);
  if (leased) await log.holdLease({ ttlMs: 10_000 });
  const invocations = Array.from({ length: writers }, (_, n) => ({
    sessionId: `s-${n}`,
    turnId: 't',
    runId: 'r',
    invocationId: 'i',
  }));
  const opened: Fact = {
    kind: 'invocation_opened',
    input: { kind: 'message', content: 'go', sourceMessages: [] },
  };
  await Promise.all(invocations.map((at) => log.append(EventWrite.plain(RuntimeEvent.create(at, opened)))));
  const started = performance.now();
  await Promise.all(
    invocations.map(async (at) => {
      for (let n = 0; n < perWriter; n += 1) {
        const fact: Fact = {
          kind: 'model_observed',
          stepId: 's1',
          observation: { kind: 'text_delta', text: `chunk ${n}` },
        };
        await log.append(EventWrite.plain(RuntimeEvent.create(at, fact)));
      }
    }),
  );
  const rate = (writers * perWriter) / ((performance.now() - started) / 1000);
  await log.close();
  return rate;
}

/** Medians of many rounds of each, without and with a lease, in ABBA order. */
async function rounds(target: (name: string) => string): Promise<{ off: number; on: number }> {
  const off: number[] = [];
  const on: number[] = [];
  await throughput(target('warm'), true);
  // A round takes under half a second: many of them, in ABBA order so that a drift of
  // the machine hits both sides alike, and medians, so that one stall moves neither.
  for (let round = 0; round < ROUNDS; round += 1) {
    const leasedFirst = round % 4 === 1 || round % 4 === 2;
    for (const leased of leasedFirst ? [true, false] : [false, true]) {
      const rate = await throughput(target(`${leased ? 'on' : 'off'}-${round}`), leased);
      (leased ? on : off).push(rate);
    }
  }
  return { off: percentile(off, 0.5), on: percentile(on, 0.5) };
}

const ROUNDS = 12;

/**
 * Reports `lease_overhead`: throughput without a lease ÷ with one, same run, on a file
 * (fsyncs included, whose noise is of the same order as the goal) and in memory
 * (`lease_overhead_cpu`: the CPU a lease adds, nothing else).
 */
export async function leaseOverhead(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'factum-lease-bench-'));
  try {
    const onFile = await rounds((name) => join(root, `${name}.sqlite`));
    report({
      measure: 'lease_overhead',
      unit: 'ratio of facts/s (64 writers, group commit)',
      value: onFile.off,
      baseline: 'the same writes from a log holding a host lease (stamped, owner-checked)',
      baselineValue: onFile.on,
      goal: '<= 1.02',
      note: `medians of ${ROUNDS} rounds in ABBA order: facts/s without lease ${Math.round(onFile.off)}, with ${Math.round(onFile.on)}`,
    });
    const inMemory = await rounds(() => ':memory:');
    report({
      measure: 'lease_overhead_cpu',
      unit: 'ratio of facts/s (64 writers, group commit, :memory: log: no fsync)',
      value: inMemory.off,
      baseline: 'the same writes from a log holding a host lease (stamped, owner-checked)',
      baselineValue: inMemory.on,
      goal: '<= 1.02',
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
