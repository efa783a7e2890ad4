// PostgreSQL against SQLite, in the same run: durable appends per second for one
// writer, and what group commit is worth with 64 writers on each store.
import { rate, report } from '../../../tooling/bench/harness.ts';
import { acquireSharedPostgres } from '../../../tooling/test-postgres/shared-postgres.mjs';
import { EventLog, type LogTarget } from '../src/index.ts';
import { testStores } from '../src/testing.ts';
import { at, observed, opened, write } from './fixtures.ts';

async function appendsPerSecond(target: LogTarget, count: number): Promise<number> {
  const log = await EventLog.open(target);
  await log.append(write(at('s'), opened));
  const perSecond = await rate(count, () => log.append(write(at('s'), observed)));
  await log.close();
  return perSecond;
}

async function concurrent(target: LogTarget, maxBatch: number, rounds: number): Promise<number> {
  const log = await EventLog.open(target, { maxBatch });
  const writers = 64;
  const prefix = `m${maxBatch}`;
  await Promise.all(
    Array.from({ length: writers }, (_, w) => log.append(write(at(`${prefix}-${w}`), opened))),
  );
  const started = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let round = 0; round < rounds; round += 1) await log.append(write(at(`${prefix}-${w}`), observed));
    }),
  );
  const perSecond = (writers * rounds) / ((performance.now() - started) / 1000);
  await log.close();
  return perSecond;
}

/**
 * Against FACTUM_TEST_POSTGRES_URL's server, or else an embedded one the benchmark
 * starts, with PostgreSQL's default durability (the tests' skips fsync).
 */
export async function postgresAgainstSqlite(): Promise<void> {
  const server = process.env.FACTUM_TEST_POSTGRES_URL
    ? undefined
    : await acquireSharedPostgres({ durable: true });
  if (server !== undefined) process.env.FACTUM_TEST_POSTGRES_URL = server.url;
  try {
    await compareStores();
  } finally {
    server?.release();
  }
}

async function compareStores(): Promise<void> {
  const [sqlite, postgres] = testStores();
  if (postgres === undefined || sqlite === undefined) return;
  const stores = { sqlite: await sqlite.create(), postgres: await postgres.create() };
  try {
    const onSqlite = await appendsPerSecond(stores.sqlite.target, 1000);
    const onPostgres = await appendsPerSecond(stores.postgres.target, 1000);
    report({
      measure: 'postgres_durable_appends_per_second',
      unit: 'appends/s',
      value: onPostgres,
      baseline: 'the same appends on SQLite (WAL, synchronous=FULL), one writer',
      baselineValue: onSqlite,
    });
    const grouped = await concurrent(stores.postgres.target, 256, 20);
    const single = await concurrent(stores.postgres.target, 1, 20);
    report({
      measure: 'postgres_group_commit_64_writers',
      unit: 'appends/s',
      value: grouped,
      baseline: 'the same 64 writers on PostgreSQL with one transaction per fact (maxBatch 1)',
      baselineValue: single,
    });
    const sqliteGrouped = await concurrent(stores.sqlite.target, 256, 20);
    report({
      measure: 'postgres_vs_sqlite_group_commit_64_writers',
      unit: 'appends/s',
      value: grouped,
      baseline: 'the same 64 grouped writers on SQLite',
      baselineValue: sqliteGrouped,
    });
  } finally {
    await stores.sqlite[Symbol.asyncDispose]();
    await stores.postgres[Symbol.asyncDispose]();
  }
}
