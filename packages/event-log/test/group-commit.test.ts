import { EventWrite, FactParseError, RuntimeEvent } from '@factum/agent-facts';
import { describe, expect, it } from 'vitest';
import { AppendRefusedError, EventLog, EventLogError } from '../src/index.ts';
import { testStores } from '../src/testing.ts';
import { bounds, facts, invocation, write } from './support/facts.ts';

describe.each(testStores())('group commit ($name)', (stores) => {
  it('64 concurrent writers share a few transactions and each promise settles only when durable', async () => {
    await using store = await stores.create();
    const batches: number[] = [];
    const log = await EventLog.open(store.target, {
      hooks: { afterCommit: ({ size }) => batches.push(size) },
    });
    const sessions = Array.from({ length: 64 }, (_, index) => invocation(`-${index}`, `session-${index}`));
    await Promise.all(sessions.map((at) => log.append(write(at, facts.opened()))));
    expect(batches.reduce((sum, size) => sum + size, 0)).toBe(64);
    expect(batches.length).toBeLessThanOrEqual(2);
    await log.close();
    const reopened = await EventLog.open(store.target);
    expect((await reopened.prefix(bounds)).events).toHaveLength(64);
    expect(await reopened.verifyChain()).toMatchObject({ ok: true, events: 64 });
    await reopened.close();
  });

  it('a refused write in a batch is rejected alone; the others commit', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
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
    await using store = await stores.create();
    let fail = false;
    const log = await EventLog.open(store.target, {
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
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 2 });
    await log.close();
  });
});

describe.each(testStores())('bad input ($name)', (stores) => {
  it('a malformed fact is refused with the path of the bad field and nothing is written', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
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
    await using store = await stores.create();
    await using log = await EventLog.open(store.target, { maxEventBytes: 4096 });
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
    await using store = await stores.create();
    const log = await EventLog.open(store.target);
    const at = invocation();
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.completed('s', [])));
    await log.append(write(at, facts.ended()));
    await log.close();
    await store.raw(`update events set body = '{"not":"an event"}' where sequence = 2`);
    const reopened = await EventLog.open(store.target);
    const error = await reopened.prefix(bounds).catch((caught: unknown) => caught);
    expect(EventLogError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'corrupt_row', sequence: 2 });
    expect((error as Error).message).toContain('stored event 2');
    expect(await reopened.verifyChain()).toMatchObject({ ok: false, brokenAt: 2 });
    await reopened.close();
  });
});
