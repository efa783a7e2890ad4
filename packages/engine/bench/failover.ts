// failover_ms: on one PostgreSQL log, SIGKILL a host mid-effect and time until a
// survivor has admitted (and run) a new turn in the dead host's session.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventLog } from '@factum/event-log';
import type { TestStoreFactory } from '@factum/event-log/testing';
import { percentile, report } from '../../../tooling/bench/harness.ts';

const child = fileURLToPath(new URL('../test/support/lease-child.ts', import.meta.url));
const ttlMs = 2000;

type Child = { process: ChildProcess; line(prefix: string): Promise<number> };

/** A lease child; `line` resolves with the time (performance.now) a line with `prefix` came. */
function start(args: string[]): Child {
  const process = spawn('node', ['--conditions=@factum/source', '--import', 'tsx', child, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const seen = new Map<string, number>();
  const waiters: { prefix: string; resolve: (at: number) => void }[] = [];
  let text = '';
  process.stdout!.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n')) {
      const line = text.slice(0, end);
      text = text.slice(end + 1);
      const at = performance.now();
      seen.set(line, at);
      for (const waiter of waiters.filter((entry) => line.startsWith(entry.prefix))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(at);
      }
    }
  });
  return {
    process,
    line(prefix) {
      for (const [line, at] of seen) if (line.startsWith(prefix)) return Promise.resolve(at);
      return new Promise((resolve) => waiters.push({ prefix, resolve }));
    },
  };
}

/** Reports `failover_ms`: p50 of SIGKILL → a survivor's turn in the dead session, ÷ (TTL + 1 s). */
export async function failover(postgres: TestStoreFactory, rounds = 3): Promise<void> {
  const samples: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    await using store = await postgres.create();
    const dir = mkdtempSync(join(tmpdir(), 'factum-failover-'));
    try {
      await (await EventLog.open(store.target)).close();
      const target = JSON.stringify(store.target);
      const ledger = join(dir, 'ledger');
      const gate = join(dir, 'gate');
      const survivors = ['b', 'c'].map((name) =>
        start(['survivor', target, ledger, name, String(ttlMs), 'dead', gate]),
      );
      await Promise.all(survivors.map((survivor) => survivor.line('live')));
      const victim = start(['effect', target, ledger, 'a', String(ttlMs), 'dead', 'hang']);
      await victim.line('effect');
      const killed = performance.now();
      victim.process.kill('SIGKILL');
      writeFileSync(gate, '');
      const admitted = await Promise.race(survivors.map((survivor) => survivor.line('admitted')));
      samples.push(admitted - killed);
      await Promise.all(survivors.map((survivor) => survivor.line('done')));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  report({
    measure: 'failover_ms',
    unit: 'ms, p50 of SIGKILL → a survivor ran a new turn in the dead session',
    value: percentile(samples, 0.5),
    baseline: `lease time-to-live + 1 s (${ttlMs} + 1000 ms)`,
    baselineValue: ttlMs + 1000,
    goal: '<= 1',
    note: `three engine processes on one PostgreSQL database, sweep every ttl/4; samples ${samples.map(Math.round).join(', ')}`,
  });
}
