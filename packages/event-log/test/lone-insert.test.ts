import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { EventWrite, RuntimeEvent } from '@factum/agent-facts';
import { describe, expect, it } from 'vitest';
import { AppendRefusedError, EventLog } from '../src/index.ts';
import { bounds, facts, invocation, temporaryDirectory, write } from './support/facts.ts';

// A lone model fact commits as one autocommit insert, judged against the rules' cache;
// the insert's key (the cached head + 1) is what proves the cache was the log's state.
describe('a lone write without a transaction of its own', () => {
  it('chains on the real head when another connection wrote since, and its rules see what that one did', async () => {
    using dir = temporaryDirectory();
    const a = await EventLog.open(dir.file, { writerThread: false });
    const b = await EventLog.open(dir.file, { writerThread: false });
    const mine = invocation('-a', 'a');
    const theirs = invocation('-b', 'b');
    await a.append(write(mine, facts.opened()));
    await b.append(write(theirs, facts.opened()));
    const sequences: number[] = [];
    for (let step = 0; step < 20; step += 1) {
      const [log, at] = step % 3 === 2 ? [b, theirs] : [a, mine];
      sequences.push((await log.append(write(at, facts.completed(`s${step}`, [])))).sequence);
    }
    expect(sequences).toEqual(Array.from({ length: 20 }, (_, index) => index + 3));
    // b ends a's run; a's cache still holds it live, and a lone model fact must not land on it.
    await b.append(write(mine, facts.ended()));
    const late = a.append(write(mine, facts.completed('late', [])));
    await expect(late).rejects.toBeInstanceOf(AppendRefusedError);
    await expect(late).rejects.toMatchObject({ code: 'sealed_invocation', outcome: 'rejected' });
    for (const log of [a, b]) expect(await log.verifyChain()).toMatchObject({ ok: true, events: 23 });
    const fromA = await a.scopedPrefix({ session: 'a' }, bounds);
    expect(fromA.events.map((stored) => stored.event.fact.kind).at(-1)).toBe('invocation_ended');
    await a.close();
    await b.close();
  });

  it('a lone write that repeats an event id is rejected with nothing written, and the log goes on', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    const at = invocation();
    await log.append(write(at, facts.opened()));
    const first = RuntimeEvent.create(at, facts.completed('s1', []));
    await log.append(EventWrite.plain(first));
    const again = RuntimeEvent.create(at, facts.completed('s2', []), { id: () => first.id });
    await expect(log.append(EventWrite.plain(again))).rejects.toMatchObject({ outcome: 'rejected' });
    expect((await log.prefix(bounds)).highWater).toBe(2);
    expect((await log.append(write(at, facts.completed('s3', [])))).sequence).toBe(3);
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 3 });
  });

  it('a lone write that finds the log locked by another connection waits its turn and commits after it', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file, { writerThread: false });
    const at = invocation();
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.completed('s1', [])));
    const holder = lockHolder(dir.file);
    await holder.locked;
    // Runs on this thread inside SQLite's busy handler until the other connection commits.
    const stored = log.append(write(at, facts.completed('s2', [])));
    await holder.released;
    expect((await stored).sequence).toBe(3);
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 3 });
  });
});

/**
 * Another connection, on a second thread: takes the log's write lock, changes a rule
 * table, holds the lock a moment and commits.
 */
function lockHolder(file: string): { locked: Promise<void>; released: Promise<void> } {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const Database = require(workerData.module);
    const db = new Database(workerData.file);
    db.pragma('busy_timeout = 10000');
    db.exec('begin immediate');
    db.prepare('update sessions set held_for_invocation_id = held_for_invocation_id').run();
    parentPort.postMessage('locked');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    db.exec('commit');
    db.close();
    parentPort.postMessage('released');
  `;
  const module = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(source, { eval: true, workerData: { file, module } });
  const next = (word: string) =>
    new Promise<void>((resolve, reject) => {
      worker.on('message', (message) => message === word && resolve());
      worker.on('error', reject);
    });
  return { locked: next('locked'), released: next('released') };
}
