// lease_overhead: 64 writers' group-commit throughput on one SQLite log, with and without
// a host lease (stamped writes, owner checked in every batch), alternating rounds.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventWrite, type Fact, RuntimeEvent } from '@factum/agent-facts';
import { EventLog } from '@factum/event-log';
import { report } from '../../../tooling/bench/harness.ts';

const writers = 64;
const perWriter = 60;

async function throughput(file: string, leased: boolean): Promise<number> {
  const log = await EventLog.open(file);
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

/** Reports `lease_overhead`: throughput without a lease ÷ with one, same run. */
export async function leaseOverhead(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'factum-lease-bench-'));
  try {
    let off = 0;
    let on = 0;
    await throughput(join(root, 'warm.sqlite'), true);
    for (let round = 0; round < 4; round += 1) {
      off += await throughput(join(root, `off-${round}.sqlite`), false);
      on += await throughput(join(root, `on-${round}.sqlite`), true);
    }
    report({
      measure: 'lease_overhead',
      unit: 'ratio of facts/s (64 writers, group commit)',
      value: off / 4,
      baseline: 'the same writes from a log holding a host lease (stamped, owner-checked)',
      baselineValue: on / 4,
      goal: '<= 1.02',
      note: `facts/s without lease ${Math.round(off / 4)}, with ${Math.round(on / 4)}`,
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
