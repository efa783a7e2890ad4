import { mkdirSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { AppendRefusedError, type BatchInfo, EventLog } from '../src/index.ts';
import { stopWriterThread } from '../src/writer-thread-client.ts';
import { bundleChild, startChild } from './support/child-bundle.ts';
import { bounds, facts, invocation, settled, temporaryDirectory, write } from './support/facts.ts';

let writerChild = '';
beforeAll(async () => {
  writerChild = await bundleChild(new URL('./support/writer-child.ts', import.meta.url), 'writer-child');
}, 60_000);

describe('the writer thread', () => {
  it('commits batches of several writes off the event loop and lone writes on it, into one verified chain', async () => {
    using dir = temporaryDirectory();
    const committed: BatchInfo[] = [];
    // Lone writes stay on the loop however slow the disk is today (the budget has its own test).
    const log = await EventLog.open(dir.file, {
      loneCommitBudgetMs: Number.POSITIVE_INFINITY,
      hooks: { afterCommit: (batch) => committed.push(batch) },
    });
    await log.startWriterThread();
    for (let round = 0; round < 3; round += 1) {
      const group = Array.from({ length: 16 }, (_, index) =>
        invocation(`-${round}-${index}`, `s-${round}-${index}`),
      );
      await Promise.all(group.map((at) => log.append(write(at, facts.opened()))));
      // A read right after the promises sees every write: the thread's commit is durable and visible.
      expect((await log.prefix(bounds)).highWater).toBe(round * 17 + 16);
      for (const at of group.slice(0, 1)) await log.append(write(at, facts.ended()));
    }
    const where = new Set(
      committed.map((batch) => `${batch.size > 1 ? 'batch' : 'lone'}:${batch.committer}`),
    );
    expect(where).toEqual(new Set(['batch:writer_thread', 'lone:event_loop']));
    const before = await log.prefix(bounds);
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 51 });
    await log.close();
    await using reopened = await EventLog.open(dir.file);
    expect(await reopened.prefix(bounds)).toMatchObject({
      highWater: before.highWater,
      digest: before.digest,
    });
  });

  it('no batch waits for the thread to start: the first batches of several writes commit on the event loop until it has opened the log', async () => {
    using dir = temporaryDirectory();
    const committed: string[] = [];
    await using log = await EventLog.open(dir.file, {
      hooks: { afterCommit: (batch) => committed.push(`${batch.size}:${batch.committer}`) },
    });
    const group = Array.from({ length: 8 }, (_, index) => invocation(`-${index}`, `s-${index}`));
    // A thread starts in tens of milliseconds at best; this batch commits in the same turn.
    await Promise.all(group.map((at) => log.append(write(at, facts.opened()))));
    expect(committed).toEqual(['8:event_loop']);
    await log.startWriterThread();
    await Promise.all(group.map((at) => log.append(write(at, facts.completed('s1', [])))));
    expect(committed).toEqual(['8:event_loop', '8:writer_thread']);
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 16 });
  });

  it('a thread that cannot open the log leaves every batch on the event loop, and startWriterThread says why', async () => {
    using dir = temporaryDirectory();
    const committed: string[] = [];
    await using log = await EventLog.open(dir.file, {
      hooks: { afterCommit: (batch) => committed.push(`${batch.size}:${batch.committer}`) },
    });
    // The thread opens the file by its path: gone, and a directory in its place.
    rmSync(dir.file);
    mkdirSync(dir.file);
    await expect(log.startWriterThread()).rejects.toMatchObject({ code: 'SQLITE_CANTOPEN' });
    const group = Array.from({ length: 4 }, (_, index) => invocation(`-${index}`, `s-${index}`));
    await Promise.all(group.map((at) => log.append(write(at, facts.opened()))));
    expect(committed).toEqual(['4:event_loop']);
  });

  it('lone writes move to the thread while their commits are slow, and come back once they cost under half the budget', async () => {
    using dir = temporaryDirectory();
    // Spins long against the budget, so that a busy disk's own time cannot move the
    // switch (it would need commits of over 100 ms to).
    const slow = await slowCommits(dir.file, 100);
    await using log = slow.log;
    const { committers } = slow;
    const at = invocation();
    await log.append(write(at, facts.opened()));
    slow.ms = 250;
    for (let index = 0; index < 12; index += 1) await log.append(write(at, facts.completed(`s${index}`, [])));
    // The first four lone commits are a warm-up and not counted (the opening and three
    // slow ones); the average (α = 0.1) then passes 100 ms after four or five counted slow
    // commits (250 × (1 − 0.9⁵) ≈ 102, more with the disk's own time); from then on they
    // commit in the thread.
    const switched = committers.indexOf('writer_thread');
    expect(switched).toBeGreaterThanOrEqual(8);
    expect(switched).toBeLessThanOrEqual(9);
    expect(committers.slice(0, switched)).toEqual(Array(switched).fill('event_loop'));
    expect(committers.slice(switched)).toEqual(Array(13 - switched).fill('writer_thread'));
    slow.ms = 0;
    committers.length = 0;
    // Back under 50 ms (half the budget) within a dozen or two cheap commits.
    for (let index = 0; index < 40; index += 1) await log.append(write(at, facts.completed(`t${index}`, [])));
    expect(committers[0]).toBe('writer_thread');
    expect(committers.at(-1)).toBe('event_loop');
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 53 });
  });

  it('after a batch of several callers, lone writes commit in the thread until eight batches of one caller follow', async () => {
    using dir = temporaryDirectory();
    const committed: string[] = [];
    // A budget no disk here reaches: only other writers can move lone writes.
    await using log = await EventLog.open(dir.file, {
      loneCommitBudgetMs: 10_000,
      hooks: { afterCommit: (batch) => committed.push(`${batch.size}:${batch.committer}`) },
    });
    await log.startWriterThread();
    const first = invocation();
    await log.append(write(first, facts.opened()));
    const group = Array.from({ length: 8 }, (_, index) => invocation(`-${index}`, `s-${index}`));
    await Promise.all(group.map((at) => log.append(write(at, facts.opened()))));
    for (let index = 0; index < 10; index += 1)
      await log.append(write(first, facts.completed(`s${index}`, [])));
    expect(committed).toEqual([
      '1:event_loop',
      '8:writer_thread',
      ...Array(8).fill('1:writer_thread'),
      '1:event_loop',
      '1:event_loop',
    ]);
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 19 });
  });

  it('with a second live process writing the same file, lone writes that move between the thread and the loop keep every commit and every rule', async () => {
    using dir = temporaryDirectory();
    const committers = new Set<string>();
    await using log = await EventLog.open(dir.file, {
      loneCommitBudgetMs: 10_000,
      hooks: { afterCommit: (batch) => batch.size === 1 && committers.add(batch.committer) },
    });
    await log.startWriterThread();
    const shared = invocation('-shared', 'shared');
    await log.append(write(shared, facts.opened()));
    // Halfway through, the other process waits until this one has committed: their
    // commits interleave however the two are scheduled.
    const other = startChild(writerChild, [dir.file, 'other', '120', '60']);
    let halfway = false;
    let resumed = false;
    other.process.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString('utf8').includes('half\n')) halfway = true;
    });
    let ended = false;
    // Either way: a child that failed is reported by the `await other.done` below.
    const markEnded = () => {
      ended = true;
    };
    other.done.then(markEnded, markEnded);
    await other.ready;
    other.process.stdin.write('go\n');
    // Rounds of a burst of several sessions (one batch in the thread) and ten lone steps
    // of the shared run (eight in the thread, two on the loop), for as long as the other
    // process writes: each commit's connection must see what it committed in between.
    const burst = Array.from({ length: 6 }, (_, index) => invocation(`-b${index}`, `b-${index}`));
    let rounds = 0;
    for (; rounds < 3 || !ended; rounds += 1) {
      await Promise.all(
        burst.map((at) =>
          log.append(write(at, rounds === 0 ? facts.opened() : facts.completed(`b${rounds}`, []))),
        ),
      );
      for (let index = 0; index < 10; index += 1) {
        await log.append(write(shared, facts.completed(`r${rounds}-${index}`, [])));
        if (halfway && !resumed) {
          resumed = true;
          other.process.stdin.write('more\n');
        }
      }
    }
    const { code, output } = await other.done;
    expect(code, output).toBe(0);
    expect(output.trim().split('\n').at(-1)).toBe('done 120 session_busy');
    expect(committers).toEqual(new Set(['writer_thread', 'event_loop']));
    const { events } = await log.scopedPrefix({ session: 'shared' }, bounds);
    expect(
      events.map(({ event }) =>
        event.fact.kind === 'model_completed' ? event.fact.stepId : event.fact.kind,
      ),
    ).toEqual([
      'invocation_opened',
      ...Array.from({ length: rounds }, (_, round) =>
        Array.from({ length: 10 }, (_, index) => `r${round}-${index}`),
      ).flat(),
    ]);
    const theirs = await log.scopedPrefix({ session: 'own-other' }, bounds);
    expect(theirs.events.map(({ event }) => event.fact.kind)).toEqual([
      'invocation_opened',
      ...Array(120).fill('model_completed'),
      'invocation_ended',
    ]);
    // The two processes' commits interleave: this one's lie between the other's first and last.
    const [first, last] = [theirs.events[0]!.sequence, theirs.events.at(-1)!.sequence];
    expect(events.some(({ sequence }) => sequence > first && sequence < last)).toBe(true);
    // The shared run, the bursts and the other process's 122.
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 1 + rounds * 10 + rounds * 6 + 122 });
  });

  it('cold first commits and a single stalled one do not send lone writes to the thread', async () => {
    using dir = temporaryDirectory();
    // A budget far above a loaded disk's own commits (they would need 30 ms each to matter).
    const slow = await slowCommits(dir.file, 50);
    await using log = slow.log;
    const { committers } = slow;
    slow.ms = 500;
    const at = invocation();
    // Four cold commits, each ten budgets long: a warm-up, not counted (the first alone
    // would have put the average at the budget).
    await log.append(write(at, facts.opened()));
    for (let index = 0; index < 3; index += 1) await log.append(write(at, facts.completed(`c${index}`, [])));
    slow.ms = 0;
    for (let index = 0; index < 10; index += 1) await log.append(write(at, facts.completed(`w${index}`, [])));
    // One stall of ten budgets moves the average by at most four budgets' weight (20 ms).
    slow.ms = 500;
    await log.append(write(at, facts.completed('stall', [])));
    slow.ms = 0;
    for (let index = 0; index < 10; index += 1) await log.append(write(at, facts.completed(`a${index}`, [])));
    expect(committers).toEqual(Array(25).fill('event_loop'));
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 25 });
  });

  it('with writerThread: false every batch commits on the event loop', async () => {
    using dir = temporaryDirectory();
    const committers = new Set<string>();
    await using log = await EventLog.open(dir.file, {
      writerThread: false,
      hooks: { afterCommit: (batch) => committers.add(batch.committer) },
    });
    const group = Array.from({ length: 8 }, (_, index) => invocation(`-${index}`, `s-${index}`));
    await Promise.all(group.map((at) => log.append(write(at, facts.opened()))));
    expect(committers).toEqual(new Set(['event_loop']));
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 8 });
  });

  it('refuses each broken write of a batch in the thread with its own code, and commits the rest', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    await log.startWriterThread();
    const at = invocation();
    const other = invocation('-2', 'other');
    const origin = { kind: 'provider', stepId: 's' } as const;
    // One turn of the event loop: the whole list is one batch.
    const results = await Promise.allSettled([
      log.append(write(at, facts.opened())),
      log.append(write(at, facts.dispatched('s:a', origin))),
      log.append(write(at, facts.dispatched('s:a', origin))),
      log.append(write(at, facts.failed('s:missing'))),
      log.append(settled(at, 's:a', { ok: true })),
      log.append(write(at, facts.failed('s:a'))),
      log.append(write(other, facts.ended())),
      log.append(write(at, facts.ended())),
      log.append(write(at, facts.completed('s', []))),
    ]);
    const codes = results.map((result) =>
      result.status === 'fulfilled'
        ? 'stored'
        : AppendRefusedError.isInstance(result.reason) && result.reason.code,
    );
    expect(codes).toEqual([
      'stored',
      'stored',
      'duplicate_dispatch',
      'unknown_operation',
      'stored',
      'operation_closed',
      'unknown_invocation',
      'stored',
      'sealed_invocation',
    ]);
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 4 });
    const settledEvent = (await log.prefix(bounds)).events[2]!;
    expect((await log.resolveToolResult(at.sessionId, settledEvent.event.id)).json()).toEqual({ ok: true });
  });

  it('a beforeCommit hook that throws in a thread batch rolls it back, and the caller sees the hook error', async () => {
    using dir = temporaryDirectory();
    const injected = new Error('injected before COMMIT');
    let fail = true;
    await using log = await EventLog.open(dir.file, {
      hooks: {
        beforeCommit: ({ committer }) => {
          if (fail && committer === 'writer_thread') throw injected;
        },
      },
    });
    await log.startWriterThread();
    const group = [1, 2, 3].map((index) => invocation(`-${index}`, `s-${index}`));
    const results = await Promise.allSettled(group.map((at) => log.append(write(at, facts.opened()))));
    for (const result of results) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toMatchObject({
        outcome: 'rejected',
        cause: injected,
      });
    }
    expect((await log.prefix(bounds)).highWater).toBe(0);
    fail = false;
    await Promise.all(group.map((at) => log.append(write(at, facts.opened()))));
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 3 });
  });

  it('a lease renewal while a thread batch holds the write lock and waits for its beforeCommit hook: the renewal yields, the hook runs, both commit', async () => {
    using dir = temporaryDirectory();
    /** What the renewal came to: undefined once renewed, else its error. */
    let renewal: Promise<unknown> | undefined;
    let held = false;
    const hooked: string[] = [];
    const log: EventLog = await EventLog.open(dir.file, {
      hooks: {
        batchStarted: ({ committer }) => {
          if (committer !== 'writer_thread' || renewal !== undefined) return;
          // Once the batch is sent to the thread (in this turn's microtasks): the thread
          // takes the write lock and waits for the hook, which runs only when this
          // thread is free; the renewal's statement comes first.
          renewal = new Promise<void>((resolve) => setImmediate(resolve))
            .then(() => {
              held = waitUntilLocked(dir.file);
              return log.lease!.renew();
            })
            .then(
              () => undefined,
              (error: unknown) => error,
            );
        },
        beforeCommit: ({ committer }) => hooked.push(committer),
      },
    });
    await log.holdLease({ hostId: 'host-hooked', ttlMs: 60_000, renewEveryMs: 50_000 });
    await log.startWriterThread();
    const group = [1, 2, 3].map((index) => invocation(`-${index}`, `s-${index}`));
    await Promise.all(group.map((at) => log.append(write(at, facts.opened()))));
    expect(renewal).toBeDefined();
    // The renewal's statement came while the thread held the lock (not before it took it).
    expect(held).toBe(true);
    expect(await renewal).toBeUndefined();
    expect(log.lease!.status()).toMatchObject({
      hostId: 'host-hooked',
      epoch: 1,
      lost: 0,
      canDispatch: true,
    });
    expect(hooked).toEqual(['writer_thread']);
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 3 });
    await log.close();
  });

  it('a thread that dies with a batch in it leaves that batch outcome_unknown, and the next batch runs in a new thread', async () => {
    using dir = temporaryDirectory();
    let stop = false;
    let stopping: Promise<void> | undefined;
    await using log = await EventLog.open(dir.file, {
      hooks: {
        beforeCommit: () => {
          if (stop) stopping = stopWriterThread();
        },
      },
    });
    await log.startWriterThread();
    const first = [1, 2].map((index) => invocation(`-${index}`, `s-${index}`));
    await Promise.all(first.map((at) => log.append(write(at, facts.opened()))));
    stop = true;
    const cut = [3, 4].map((index) => invocation(`-${index}`, `s-${index}`));
    const results = await Promise.allSettled(cut.map((at) => log.append(write(at, facts.opened()))));
    await stopping;
    stop = false;
    for (const result of results) {
      expect((result as PromiseRejectedResult).reason).toMatchObject({ outcome: 'outcome_unknown' });
    }
    // Nothing is half there: the cut batch is whole or absent, and the chain verifies.
    const highWater = (await log.prefix(bounds)).highWater;
    expect([2, 4]).toContain(highWater);
    const next = [5, 6].map((index) => invocation(`-${index}`, `s-${index}`));
    await Promise.all(next.map((at) => log.append(write(at, facts.opened()))));
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: highWater + 2 });
  });
});

describe('schema', () => {
  it('a log whose events were keyed by a bigint sequence is rebuilt keyed by the rowid, digests unchanged', async () => {
    using dir = temporaryDirectory();
    const log = await EventLog.open(dir.file);
    const at = invocation();
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.completed('s', [])));
    await log.append(write(at, facts.ended()));
    const before = await log.prefix(bounds);
    await log.close();
    // The table as the first release made it: `sequence bigint primary key`, a second b-tree.
    const raw = new Database(dir.file);
    raw.exec(`create table events_old as select * from events;
      drop table events;
      create table events (sequence bigint primary key, event_id text not null unique, session_id text not null,
        invocation_id text not null, run_id text not null, kind text not null, operation_id text, body text not null,
        bytes integer not null, digest text not null, session_digest text not null);
      insert into events select * from events_old;
      drop table events_old;
      create index events_by_session on events (session_id, sequence);
      create index events_by_invocation on events (session_id, invocation_id, sequence);
      drop table hosts;
      alter table invocations drop column owner_host_id;
      alter table invocations drop column owner_epoch;
      alter table invocations drop column fence;
      delete from kysely_migration where name in ('0002_sqlite_sequence_is_rowid', '0003_hosts_and_leases');`);
    const sequenceType = () =>
      (raw.prepare('pragma table_info(events)').all() as { name: string; type: string }[]).find(
        (column) => column.name === 'sequence',
      )?.type;
    expect(sequenceType()).toBe('bigint');
    await using reopened = await EventLog.open(dir.file);
    expect(sequenceType()?.toLowerCase()).toBe('integer');
    const indexes = raw
      .prepare(`select name from sqlite_master where type = 'index' and tbl_name = 'events'`)
      .all();
    expect(indexes.map((row) => (row as { name: string }).name).sort()).toEqual([
      'events_by_invocation',
      'events_by_session',
      'sqlite_autoindex_events_1',
    ]);
    raw.close();
    expect(await reopened.prefix(bounds)).toMatchObject({ highWater: 3, digest: before.digest });
    expect(await reopened.verifyChain()).toMatchObject({ ok: true, events: 3 });
    await reopened.append(write(invocation('-2'), facts.opened()));
    expect(await reopened.verifyChain()).toMatchObject({ ok: true, events: 4 });
  });
});

/**
 * A log whose every commit spins `ms` inside its transaction — a slow disk, wherever it
 * commits — and that records where each commit ran.
 */
async function slowCommits(file: string, loneCommitBudgetMs: number) {
  const committers: string[] = [];
  const slow = {
    ms: 0,
    committers,
    log: await EventLog.open(file, {
      loneCommitBudgetMs,
      hooks: {
        beforeCommit: () => {
          const until = performance.now() + slow.ms;
          while (performance.now() < until);
        },
        afterCommit: ({ committer }) => committers.push(committer),
      },
    }),
  };
  await slow.log.startWriterThread();
  return slow;
}

/**
 * Spins (this thread blocked, as a synchronous statement would block it) until another
 * connection holds `path`'s write lock; false if none did within five seconds.
 */
function waitUntilLocked(path: string): boolean {
  const probe = new Database(path, { timeout: 0 });
  const pause = new Int32Array(new SharedArrayBuffer(4));
  try {
    const until = Date.now() + 5_000;
    while (Date.now() < until) {
      try {
        probe.exec('begin immediate');
        probe.exec('rollback');
        // Long enough for the thread's busy handler to find the lock free.
        Atomics.wait(pause, 0, 0, 2);
      } catch (error) {
        if (String((error as { code?: unknown }).code).startsWith('SQLITE_BUSY')) return true;
        throw error;
      }
    }
    return false;
  } finally {
    probe.close();
  }
}
