import { EventWrite, FactParseError, RuntimeEvent } from '@factum/agent-facts';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { AppendRefusedError, EventLog, EventLogError } from '../src/index.ts';
import { bounds, facts, invocation, temporaryDirectory, write } from './support/facts.ts';

describe('group commit', () => {
  it('64 concurrent writers share a few transactions and each promise settles only when durable', async () => {
    using dir = temporaryDirectory();
    const batches: number[] = [];
    const log = await EventLog.open(dir.file, { hooks: { afterCommit: ({ size }) => batches.push(size) } });
    const sessions = Array.from({ length: 64 }, (_, index) => invocation(`-${index}`, `session-${index}`));
    await Promise.all(sessions.map((at) => log.append(write(at, facts.opened()))));
    expect(batches.reduce((sum, size) => sum + size, 0)).toBe(64);
    expect(batches.length).toBeLessThanOrEqual(2);
    await log.close();
    const reopened = await EventLog.open(dir.file);
    expect((await reopened.prefix(bounds)).events).toHaveLength(64);
    expect(await reopened.verifyChain()).toEqual({ ok: true, events: 64 });
    await reopened.close();
  });

  it('a refused write in a batch is rejected alone; the others commit', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    const at = invocation();
    await log.append(write(at, facts.opened()));
    const dispatch = () => write(at, facts.dispatched('s:c', { kind: 'provider', stepId: 's' }));
    const results = await Promise.allSettled([
      log.append(dispatch()),
      log.append(dispatch()),
      log.append(write(at, facts.completed('s', []))),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await log.prefix(bounds)).highWater).toBe(3);
  });

  it('a batch whose transaction fails rejects every write in it and writes nothing', async () => {
    using dir = temporaryDirectory();
    let fail = false;
    const log = await EventLog.open(dir.file, {
      hooks: {
        beforeCommit: () => {
          if (fail) throw new Error('injected failure inside the group commit');
        },
      },
    });
    await log.append(write(invocation(), facts.opened()));
    fail = true;
    const results = await Promise.allSettled(
      [1, 2, 3].map((index) => log.append(write(invocation(`-${index}`, `s-${index}`), facts.opened()))),
    );
    for (const result of results) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toMatchObject({ outcome: 'rejected' });
    }
    fail = false;
    expect((await log.prefix(bounds)).highWater).toBe(1);
    await log.append(write(invocation('-1', 's-1'), facts.opened()));
    expect(await log.verifyChain()).toEqual({ ok: true, events: 2 });
    await log.close();
  });
});

describe('bad input', () => {
  it('a malformed fact is refused with the path of the bad field and nothing is written', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    await log.append(write(invocation(), facts.opened()));
    const good = RuntimeEvent.create(invocation(), facts.completed('s', []));
    const bad = { ...good, fact: { ...good.fact, stepId: 42 } } as unknown as RuntimeEvent;
    const error = await log.append(EventWrite.plain(bad)).catch((caught: unknown) => caught);
    expect(AppendRefusedError.isInstance(error) && error.code).toBe('invalid_write');
    expect((error as Error).message).toContain('fact.stepId');
    expect(FactParseError.isInstance((error as Error).cause)).toBe(true);
    expect((await log.prefix(bounds)).highWater).toBe(1);
  });

  it('an oversized event is refused before it reaches the store', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file, { maxEventBytes: 4096 });
    await log.append(write(invocation(), facts.opened()));
    const huge = {
      kind: 'model_observed' as const,
      stepId: 's',
      observation: { kind: 'text_delta' as const, text: 'x'.repeat(5000) },
    };
    await expect(log.append(write(invocation(), huge))).rejects.toMatchObject({ code: 'write_too_large' });
    expect((await log.prefix(bounds)).highWater).toBe(1);
  });

  it('a corrupted row is reported with its sequence, never skipped', async () => {
    using dir = temporaryDirectory();
    const log = await EventLog.open(dir.file);
    const at = invocation();
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.completed('s', [])));
    await log.append(write(at, facts.ended()));
    await log.close();
    const raw = new Database(dir.file);
    raw.prepare('update events set body = ? where sequence = 2').run('{"not":"an event"}');
    raw.close();
    const reopened = await EventLog.open(dir.file);
    const error = await reopened.prefix(bounds).catch((caught: unknown) => caught);
    expect(EventLogError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'corrupt_row', sequence: 2 });
    expect((error as Error).message).toContain('stored event 2');
    expect(await reopened.verifyChain()).toMatchObject({ ok: false, brokenAt: 2 });
    await reopened.close();
  });
});
