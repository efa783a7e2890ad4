// PostgreSQL fleet: 1, 2 and 4 writer processes × 16 sessions each on one database;
// aggregate durable facts per second against one process.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventLog } from '@factum/event-log';
import type { TestStoreFactory } from '@factum/event-log/testing';
import { report } from '../../../tooling/bench/harness.ts';

const writer = fileURLToPath(new URL('./fleet-writer.ts', import.meta.url));
const durationMs = 4000;

async function aggregate(postgres: TestStoreFactory, processes: number): Promise<number> {
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
      const count = new Promise<number>((resolve) => {
        child.on('close', () => resolve(Number(/count (\d+)/.exec(text)?.[1] ?? 0)));
      });
      return { ready, count };
    });
    await Promise.all(children.map((child) => child.ready));
    writeFileSync(gate, '');
    const counts = await Promise.all(children.map((child) => child.count));
    return counts.reduce((sum, count) => sum + count, 0) / (durationMs / 1000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Reports `pg_fleet_2` and `pg_fleet_4`: aggregate facts/s of N writer processes ÷ one. */
export async function fleet(postgres: TestStoreFactory): Promise<void> {
  const one = await aggregate(postgres, 1);
  for (const processes of [2, 4]) {
    const many = await aggregate(postgres, processes);
    report({
      measure: `pg_fleet_${processes}`,
      unit: `durable facts/s, ${processes} writer processes × 16 sessions`,
      value: many,
      baseline: 'one writer process × 16 sessions on the same PostgreSQL server',
      baselineValue: one,
      goal: '>= 1',
      note: 'every batch takes the global chain advisory lock: writers of the fleet serialise',
    });
  }
}
