// Event log benchmarks: one JSON line per measure, each against a baseline of the same run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { canonicalJson, EventWrite, type Fact, type Invocation, RuntimeEvent } from '@factum/agent-facts';
import Database from 'better-sqlite3';
import { medianMs, rate, report } from '../../../tooling/bench/harness.ts';
import { EventLog } from '../src/index.ts';

const root = mkdtempSync(join(tmpdir(), 'factum-bench-'));
const file = (name: string) => join(root, `${name}.sqlite`);
const observed: Fact = {
  kind: 'model_observed',
  stepId: 's',
  observation: { kind: 'text_delta', text: 'some streamed text' },
};
const opened: Fact = {
  kind: 'invocation_opened',
  input: { kind: 'message', content: 'hi', sourceMessages: [] },
};
const ended: Fact = { kind: 'invocation_ended', outcome: { kind: 'completed' } };
const at = (session: string, id = 'i'): Invocation => ({
  sessionId: session,
  turnId: 't',
  runId: 'r',
  invocationId: id,
});
const write = (where: Invocation, fact: Fact) => EventWrite.plain(RuntimeEvent.create(where, fact));

async function durableAppends(): Promise<void> {
  const count = 600;
  const rounds = 5;
  const log = await EventLog.open(file('appends'));
  await log.append(write(at('s'), opened));
  const raw = new Database(file('raw'));
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
  const rawAppend = () => {
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
  // Alternate rounds so that disk noise from the rest of the machine hits both alike.
  let oursTotal = 0;
  let rawTotal = 0;
  for (let round = 0; round < rounds; round += 1) {
    oursTotal += await rate(count, () => log.append(write(at('s'), observed)));
    rawTotal += await rate(count, rawAppend);
  }
  await log.close();
  raw.close();
  report({
    measure: 'durable_appends_per_second',
    unit: 'appends/s',
    value: oursTotal / rounds,
    baseline:
      'raw better-sqlite3 insert of the same row into the same table, one transaction per row, same pragmas',
    baselineValue: rawTotal / rounds,
    goal: '>= 0.8',
  });
}

async function groupCommit(): Promise<void> {
  const writers = 64;
  const rounds = 40;
  const measure = async (name: string, maxBatch: number) => {
    const log = await EventLog.open(file(name), { maxBatch });
    await Promise.all(Array.from({ length: writers }, (_, w) => log.append(write(at(`s${w}`), opened))));
    const started = performance.now();
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let round = 0; round < rounds; round += 1) await log.append(write(at(`s${w}`), observed));
      }),
    );
    const perSecond = (writers * rounds) / ((performance.now() - started) / 1000);
    await log.close();
    return perSecond;
  };
  const grouped = await measure('grouped', 256);
  const single = await measure('single', 1);
  report({
    measure: 'group_commit_64_writers',
    unit: 'appends/s',
    value: grouped,
    baseline: 'the same 64 writers with one transaction per fact (maxBatch 1)',
    baselineValue: single,
    goal: '>= 10',
  });
}

async function eventLoopDelay(): Promise<void> {
  const log = await EventLog.open(file('delay'));
  await Promise.all(Array.from({ length: 64 }, (_, w) => log.append(write(at(`s${w}`), opened))));
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  const idle = monitorEventLoopDelay({ resolution: 1 });
  idle.enable();
  await new Promise((resolve) => setTimeout(resolve, 500));
  idle.disable();
  histogram.enable();
  await Promise.all(
    Array.from({ length: 64 }, async (_, w) => {
      for (let round = 0; round < 60; round += 1) await log.append(write(at(`s${w}`), observed));
    }),
  );
  histogram.disable();
  await log.close();
  report({
    measure: 'event_loop_delay_p99_64_writers',
    unit: 'ms',
    value: histogram.percentile(99) / 1e6,
    baseline: 'event loop delay p99 of an idle process',
    baselineValue: idle.percentile(99) / 1e6,
    note: 'goal: value <= 5 ms',
  });
}

/** Fills a log with `events` events in sessions of 100 facts; returns one session id. */
async function fill(path: string, events: number): Promise<string> {
  const log = await EventLog.open(path, { maxBatch: 1024 });
  const sessions = Math.max(1, Math.floor(events / 100));
  const chunk = 50;
  for (let start = 0; start < sessions; start += chunk) {
    await Promise.all(
      Array.from({ length: Math.min(chunk, sessions - start) }, async (_, offset) => {
        const where = at(`s${start + offset}`);
        const writes = [write(where, opened)];
        for (let index = 0; index < 98; index += 1) writes.push(write(where, observed));
        // Every tenth session is left unfinished, so recovery has work to list.
        if ((start + offset) % 10 !== 0) writes.push(write(where, ended));
        await Promise.all(writes.map((item) => log.append(item)));
      }),
    );
  }
  await log.close();
  return 's1';
}

async function scaling(): Promise<void> {
  const big = Number(process.env.FACTUM_BENCH_BIG_EVENTS ?? 1_000_000);
  const smallPath = file('small');
  const bigPath = file('big');
  const session = await fill(smallPath, 10_000);
  await fill(bigPath, big);
  const tiny = file('tiny');
  await fill(tiny, 1_000);
  const bounds = { maxEvents: 1000, maxBytes: 1 << 20 };
  const openAndRecover = (path: string) => async () => {
    const log = await EventLog.open(path);
    const unfinished = await log.unfinishedInvocations(10);
    for (const invocation of unfinished) await log.invocationRecovery(invocation, bounds);
    await log.close();
  };
  const small = await medianMs(15, openAndRecover(smallPath));
  const large = await medianMs(15, openAndRecover(bigPath));
  report({
    measure: 'open_and_recover_ms',
    unit: 'ms',
    value: large,
    baseline: 'the same on a 10k-event log',
    baselineValue: small,
    goal: '<= 2',
    note: `${big} events`,
  });
  const scoped = async (path: string) => {
    const log = await EventLog.open(path);
    const time = await medianMs(50, () => log.scopedPrefix({ session }, bounds));
    await log.close();
    return time;
  };
  const inTiny = await scoped(tiny);
  const inBig = await scoped(bigPath);
  report({
    measure: 'scoped_prefix_100_facts_ms',
    unit: 'ms',
    value: inBig,
    baseline: 'the same session prefix inside a 1k-event log',
    baselineValue: inTiny,
    goal: '<= 2',
    note: `${big} events`,
  });
}

try {
  await durableAppends();
  await groupCommit();
  await eventLoopDelay();
  await scaling();
} finally {
  rmSync(root, { recursive: true, force: true });
}
