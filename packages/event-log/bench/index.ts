// Event log benchmarks: one JSON line per measure, each against a baseline of the same
// run. The disk is shared with other work, so competing runs are interleaved round by
// round and medians are reported.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJson, RuntimeEvent } from '@factum/agent-facts';
import Database from 'better-sqlite3';
import { medianMs, percentile, rate, report } from '../../../tooling/bench/harness.ts';
import { EventLog } from '../src/index.ts';
import { at, fill, observed, opened, write } from './fixtures.ts';
import { idleProbe, startLoopProbe } from './loop-probe.ts';
import { postgresAgainstSqlite } from './postgres.ts';

const root = mkdtempSync(join(tmpdir(), 'factum-bench-'));
const file = (name: string) => join(root, `${name}.sqlite`);
const median = (values: readonly number[]) => percentile(values, 0.5);
const round3 = (value: number) => Math.round(value * 1000) / 1000;

function rawLog(path: string): () => void {
  const raw = new Database(path);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = FULL');
  // The same table and indexes the log keeps, so the ratio is the library's own cost.
  raw.exec(`create table events (sequence integer primary key, event_id text not null unique, session_id text not null,
    invocation_id text not null, run_id text not null, kind text not null, operation_id text, body text not null,
    bytes integer not null, digest text not null, session_digest text not null);
    create index by_session on events (session_id, sequence);
    create index by_invocation on events (session_id, invocation_id, sequence);`);
  const insert = raw.prepare('insert into events values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  let sequence = 0;
  return () => {
    const event = RuntimeEvent.create(at('s'), observed);
    const body = canonicalJson(event);
    sequence += 1;
    insert.run(
      sequence,
      event.id,
      's',
      'i',
      'r',
      'model_observed',
      null,
      body,
      body.length,
      'sha256:x',
      'sha256:y',
    );
  };
}

async function durableAppends(): Promise<void> {
  const count = 150;
  const rounds = 21;
  const log = await EventLog.open(file('appends'));
  await log.append(write(at('s'), opened));
  const rawAppend = rawLog(file('raw'));
  const ours: number[] = [];
  const raw: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    // Short rounds, alternating which goes first: a burst of disk noise hits both.
    if (round % 2 === 1) raw.push(await rate(count, rawAppend));
    ours.push(await rate(count, () => log.append(write(at('s'), observed))));
    if (round % 2 === 0) raw.push(await rate(count, rawAppend));
  }
  const ratios = ours.map((value, index) => value / raw[index]!);
  await log.close();
  report({
    measure: 'durable_appends_per_second',
    unit: 'appends/s',
    value: median(ours),
    baseline:
      'raw better-sqlite3 insert of the same row into the same table, one transaction per row, WAL + synchronous=FULL',
    baselineValue: median(raw),
    goal: '>= 0.8',
    note: `medians of ${rounds} interleaved rounds of ${count}; median of per-round ratios ${round3(median(ratios))}, p25 ${round3(percentile(ratios, 0.25))}, p75 ${round3(percentile(ratios, 0.75))}`,
  });
}

async function writers64(path: string, maxBatch: number, perWriter: number): Promise<number> {
  const log = await EventLog.open(path, { maxBatch });
  await Promise.all(Array.from({ length: 64 }, (_, w) => log.append(write(at(`s${w}`), opened))));
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 64 }, async (_, w) => {
      for (let round = 0; round < perWriter; round += 1) await log.append(write(at(`s${w}`), observed));
    }),
  );
  const perSecond = (64 * perWriter) / ((performance.now() - started) / 1000);
  await log.close();
  return perSecond;
}

async function groupCommit(): Promise<void> {
  const rounds = 3;
  const grouped: number[] = [];
  const single: number[] = [];
  // One unreported round first: the writer thread's code is not yet optimised.
  await writers64(file('grouped-warmup'), 256, 40);
  await writers64(file('single-warmup'), 1, 40);
  for (let round = 0; round < rounds; round += 1) {
    grouped.push(await writers64(file(`grouped-${round}`), 256, 40));
    single.push(await writers64(file(`single-${round}`), 1, 40));
  }
  report({
    measure: 'group_commit_64_writers',
    unit: 'appends/s',
    value: median(grouped),
    baseline: 'the same 64 writers with one transaction per fact (maxBatch 1)',
    baselineValue: median(single),
    goal: '>= 10',
    note: `medians of ${rounds} interleaved rounds after a warm-up round; per-round ratios ${grouped.map((value, index) => round3(value / single[index]!)).join(' ')}`,
  });
}

async function eventLoopDelay(): Promise<void> {
  const log = await EventLog.open(file('delay'));
  await Promise.all(Array.from({ length: 64 }, (_, w) => log.append(write(at(`s${w}`), opened))));
  const idle = await idleProbe(1000);
  const probe = startLoopProbe();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 64 }, async (_, w) => {
      for (let round = 0; round < 150; round += 1) await log.append(write(at(`s${w}`), observed));
    }),
  );
  const elapsed = performance.now() - started;
  const loaded = probe.stop();
  await log.close();
  report({
    measure: 'event_loop_delay_p99_64_writers',
    unit: 'ms',
    value: loaded.p99,
    baseline: 'p99 lateness of the same 1 ms timer probe in the same process, idle',
    baselineValue: idle.p99,
    valueGoal: '<= 5',
    note: `1 ms timer probe: ${loaded.count} samples over ${Math.round(elapsed)} ms, p50 ${round3(loaded.p50)} ms, max ${round3(loaded.max)} ms; monitorEventLoopDelay: ${loaded.histogramCount} samples, p99 ${round3(loaded.histogramP99)} ms; idle: ${idle.count} samples, max ${round3(idle.max)} ms`,
  });
}

async function scaling(): Promise<void> {
  const big = Number(process.env.FACTUM_BENCH_BIG_EVENTS ?? 1_000_000);
  const smallPath = file('small');
  const bigPath = file('big');
  const tinyPath = file('tiny');
  await fill(smallPath, 10_000);
  await fill(tinyPath, 1_000);
  const fillMs = await fill(bigPath, big);
  const session = 's1';
  const bounds = { maxEvents: 1000, maxBytes: 1 << 20 };
  const openAndRecover = (path: string) => async () => {
    const log = await EventLog.open(path);
    const unfinished = await log.unfinishedInvocations(10);
    for (const invocation of unfinished) await log.invocationRecovery(invocation, bounds);
    await log.close();
  };
  const small: number[] = [];
  const large: number[] = [];
  for (let round = 0; round < 5; round += 1) {
    small.push(await medianMs(5, openAndRecover(smallPath)));
    large.push(await medianMs(5, openAndRecover(bigPath)));
  }
  const fillNote = `${big} events, filled in ${(fillMs / 1000).toFixed(1)} s (${Math.round(big / (fillMs / 1000))} events/s)`;
  report({
    measure: 'open_and_recover_ms',
    unit: 'ms',
    value: median(large),
    baseline: 'the same on a 10k-event log',
    baselineValue: median(small),
    goal: '<= 2',
    note: fillNote,
  });
  const scoped = async (path: string) => {
    const log = await EventLog.open(path);
    const time = await medianMs(50, () => log.scopedPrefix({ session }, bounds));
    await log.close();
    return time;
  };
  const inTiny: number[] = [];
  const inBig: number[] = [];
  for (let round = 0; round < 3; round += 1) {
    inTiny.push(await scoped(tinyPath));
    inBig.push(await scoped(bigPath));
  }
  report({
    measure: 'scoped_prefix_100_facts_ms',
    unit: 'ms',
    value: median(inBig),
    baseline: 'the same session prefix inside a 1k-event log',
    baselineValue: median(inTiny),
    goal: '<= 2',
    note: `${big} events`,
  });
}

// `FACTUM_BENCH_ONLY=durableAppends,eventLoopDelay` runs only the named measures.
const measures = { durableAppends, groupCommit, eventLoopDelay, scaling, postgresAgainstSqlite };
const only = process.env.FACTUM_BENCH_ONLY?.split(',');
try {
  for (const [name, measure] of Object.entries(measures))
    if (only === undefined || only.includes(name)) await measure();
} finally {
  rmSync(root, { recursive: true, force: true });
}
