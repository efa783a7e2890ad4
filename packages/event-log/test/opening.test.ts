import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { EventLog, type LogTarget } from '../src/index.ts';
import { type TestStore, testStores } from '../src/testing.ts';
import { bundleChild, type RunningChild, startChild } from './support/child-bundle.ts';
import { schemaSnapshot } from './support/schema-snapshot.ts';

let child = '';
beforeAll(async () => {
  child = await bundleChild(new URL('./support/open-child.ts', import.meta.url), 'open-child');
}, 60_000);

/** Starts a child that opens `target`; `ready` resolves once its modules are loaded. */
function startOpener(target: LogTarget, wait = false): RunningChild {
  const url = typeof target === 'string' ? target : target.postgres;
  return startChild(child, [url, ...(wait ? ['--wait'] : [])]);
}

/** How long a child takes from `ready` to a closed log, for a new log: the window kills land in. */
async function measureOpen(target: LogTarget): Promise<number> {
  const run = startOpener(target);
  await run.ready;
  const started = performance.now();
  const { code, output } = await run.done;
  expect(code, output).toBe(0);
  return performance.now() - started;
}

/** Opens a log in this process, which must succeed, and returns its schema. */
async function openAndDescribe(target: LogTarget) {
  const log = await EventLog.open(target);
  await log.close();
  return schemaSnapshot(target);
}

describe.each(testStores())('opening a new log on $name', (stores) => {
  // A new PostgreSQL database costs a few hundred milliseconds, so fewer kills there.
  const kills = stores.name === 'sqlite' ? 100 : 24;
  const attempts = stores.name === 'sqlite' ? 3 : 1;
  // Two children at a time: the suite's other crash tests run beside this one.
  const parallel = 2;

  it(`a SIGKILL at a random point of the first open (${kills} times) leaves a log that opens with the full schema`, async () => {
    await using reference = await stores.create();
    const expected = await openAndDescribe(reference.target);
    expect(expected.applied.length).toBeGreaterThan(0);
    // The fastest of three opens: a calibration slowed by a busy machine would stretch the
    // window past most opens, and the kills would land after them instead of during.
    const durations: number[] = [];
    for (let index = 0; index < 3; index += 1) {
      await using calibration = await stores.create();
      durations.push(await measureOpen(calibration.target));
    }
    const window = Math.min(...durations) * 1.5;

    let killedMidway = 0;
    for (let round = 0; round < kills / parallel; round += 1) {
      const stores_ = await Promise.all(Array.from({ length: parallel }, () => stores.create()));
      try {
        const outcomes = await Promise.all(
          stores_.map(async (store: TestStore) => {
            const run = startOpener(store.target);
            await run.ready;
            await sleep(randomInt(0, Math.max(1, Math.ceil(window))));
            run.process.kill('SIGKILL');
            return run.done;
          }),
        );
        for (const [index, outcome] of outcomes.entries()) {
          if (outcome.signal === 'SIGKILL' && !outcome.output.includes('opened')) killedMidway += 1;
          expect(await openAndDescribe(stores_[index]!.target)).toEqual(expected);
        }
      } finally {
        await Promise.all(stores_.map((store) => store[Symbol.asyncDispose]()));
      }
    }
    // Most kills landed before the open finished, not after it.
    expect(killedMidway).toBeGreaterThan(kills / 4);
  }, 300_000);

  it('eight processes opening one new log at once all succeed, with one schema', async () => {
    await using reference = await stores.create();
    const expected = await openAndDescribe(reference.target);
    for (let attempt = 0; attempt < attempts; attempt += 1) {
      await using store = await stores.create();
      const runs = Array.from({ length: 8 }, () => startOpener(store.target, true));
      await Promise.all(runs.map((run) => run.ready));
      for (const run of runs) run.process.stdin?.write('go\n');
      const outcomes = await Promise.all(runs.map((run) => run.done));
      for (const outcome of outcomes) {
        expect(outcome.code, outcome.output).toBe(0);
        expect(outcome.output).toContain('opened');
      }
      expect(await schemaSnapshot(store.target)).toEqual(expected);
    }
  }, 120_000);
});
