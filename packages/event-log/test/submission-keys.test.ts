import { type Fact, FactParseError } from '@factum/agent-facts';
import { describe, expect, it } from 'vitest';
import { AppendRefusedError, EventLog, EventLogError } from '../src/index.ts';
import { testStores } from '../src/testing.ts';
import { bounds, facts, invocation, write } from './support/facts.ts';
import { schemaSnapshot } from './support/schema-snapshot.ts';

function keyed(key: string, content = 'send the invoice to Bob'): Fact {
  const opened = facts.opened(content);
  return { ...opened, idempotencyKey: key } as Fact;
}

async function eventCount(log: EventLog): Promise<number> {
  return (await log.read({ limit: 10_000 })).length;
}

describe.each(testStores())('submission keys on $name', (stores) => {
  it('a second opening with the same key in a session is refused duplicate_submission, live or ended, and writes nothing', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    const first = invocation('-1', 'session-a');
    await log.append(write(first, keyed('key-1')));

    // While the first is live: the key is answered before the session is found busy.
    const retry = log.append(write(invocation('-2', 'session-a'), keyed('key-1')));
    await expect(retry).rejects.toSatisfy(AppendRefusedError.isInstance);
    await expect(retry).rejects.toMatchObject({ code: 'duplicate_submission', outcome: 'rejected' });
    expect(await eventCount(log)).toBe(1);

    await log.append(write(first, facts.ended()));
    await expect(log.append(write(invocation('-3', 'session-a'), keyed('key-1')))).rejects.toMatchObject({
      code: 'duplicate_submission',
    });
    expect(await eventCount(log)).toBe(2);

    // Another key, or the same key in another session, opens as usual.
    await log.append(write(invocation('-4', 'session-a'), keyed('key-2')));
    await log.append(write(invocation('-1', 'session-b'), keyed('key-1')));
    // Without a key nothing changes.
    await log.append(write(invocation('-1', 'session-c'), facts.opened()));
    expect(await eventCount(log)).toBe(5);
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 5 });
  });

  it('the log answers a key with the invocation it opened and its events, ended or not', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    const first = invocation('-1', 'session-a');
    expect(await log.submission('session-a', 'key-1', bounds)).toBeUndefined();
    await log.append(write(first, keyed('key-1')));
    const live = await log.submission('session-a', 'key-1', bounds);
    expect(live?.invocation).toEqual(first);
    expect(live?.ended).toBe(false);
    expect(live?.events.map((stored) => stored.event.fact.kind)).toEqual(['invocation_opened']);

    await log.append(write(first, facts.completed('s1', [])));
    await log.append(write(first, facts.ended()));
    const ended = await log.submission('session-a', 'key-1', bounds);
    expect(ended?.ended).toBe(true);
    expect(ended?.events.map((stored) => stored.event.fact.kind)).toEqual([
      'invocation_opened',
      'model_completed',
      'invocation_ended',
    ]);
    expect(await log.submission('session-b', 'key-1', bounds)).toBeUndefined();
    await expect(
      log.submission('session-a', 'key-1', { maxEvents: 2, maxBytes: 1 << 20 }),
    ).rejects.toMatchObject({
      code: 'bounds_exceeded',
    });
  });

  it('one batch holding two openings with one key accepts the first only', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    const first = invocation('-1', 'session-a');
    const [opened, ended, again] = log.commitTogether([
      write(first, keyed('key-1')),
      write(first, facts.ended()),
      write(invocation('-2', 'session-a'), keyed('key-1')),
    ]);
    await opened;
    await ended;
    await expect(again).rejects.toMatchObject({ code: 'duplicate_submission' });
    expect(await eventCount(log)).toBe(2);
  });

  it('submitters on two logs (two connections, as two hosts have) racing with one key: exactly one opening', async () => {
    await using store = await stores.create();
    const a = await EventLog.open(store.target);
    const b = await EventLog.open(store.target);
    try {
      for (let round = 0; round < 10; round += 1) {
        const session = `race-${round}`;
        const results = await Promise.allSettled([
          a.append(write(invocation('-a', session), keyed('key'))),
          b.append(write(invocation('-b', session), keyed('key'))),
        ]);
        expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
        const refused = results.find((result) => result.status === 'rejected');
        expect(refused?.status === 'rejected' && refused.reason).toMatchObject({
          code: 'duplicate_submission',
        });
        const holder = await b.submission(session, 'key', bounds);
        expect(holder?.events).toHaveLength(1);
      }
      expect(await eventCount(a)).toBe(10);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('the unique index backs the rule: a second row with the key fails at the store', async () => {
    await using store = await stores.create();
    const log = await EventLog.open(store.target);
    await log.append(write(invocation('-1', 'session-a'), keyed('key-1')));
    await log.close();
    await expect(
      store.raw(
        `insert into invocations (session_id, invocation_id, turn_id, run_id, opened_sequence, fence, idempotency_key)
         values ('session-a', 'other', 't', 'r', 99, 0, 'key-1')`,
      ),
    ).rejects.toThrow(/unique/i);
  });

  it('a log from before submission keys opens, keeps its invocations, and takes keys from then on', async () => {
    await using store = await stores.create();
    const old = await EventLog.open(store.target);
    await old.append(write(invocation('-old', 'session-a'), facts.opened()));
    await old.append(write(invocation('-old', 'session-a'), facts.ended()));
    await old.close();
    await store.raw(`drop index invocations_by_submission;
      alter table invocations drop column idempotency_key;
      delete from kysely_migration where name = '0006_submission_keys';`);
    expect((await schemaSnapshot(store.target)).applied).not.toContain('0006_submission_keys');

    await using log = await EventLog.open(store.target);
    expect((await schemaSnapshot(store.target)).applied).toContain('0006_submission_keys');
    await log.append(write(invocation('-new', 'session-a'), keyed('key-1')));
    await log.append(write(invocation('-new', 'session-a'), facts.ended()));
    await expect(log.append(write(invocation('-again', 'session-a'), keyed('key-1')))).rejects.toMatchObject({
      code: 'duplicate_submission',
    });
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 4 });
  });

  it('a malformed key is refused at the boundary with nothing written', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    for (const key of ['', 'has space', 'x'.repeat(256), 'ctrl\u0007']) {
      // Facts are parsed where they are made: a bad key never reaches a commit.
      let thrown: unknown;
      try {
        await log.append(write(invocation('-1', 'session-a'), keyed(key)));
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toSatisfy(FactParseError.isInstance);
    }
    await log.append(write(invocation('-1', 'session-a'), keyed('x'.repeat(255))));
    expect(await eventCount(log)).toBe(1);
  });
});

describe('the PostgreSQL pool size', () => {
  it('is validated before anything connects', async () => {
    for (const pool of [0, -1, 1.5, 101, Number.NaN, '4' as unknown as number]) {
      const opening = EventLog.open({ postgres: 'postgres://nobody@127.0.0.1:1/none', pool });
      await expect(opening).rejects.toSatisfy(EventLogError.isInstance);
      await expect(opening).rejects.toMatchObject({ code: 'invalid_option' });
    }
  });

  it('a log on a pool of one connection commits and reads', async () => {
    const [, postgres] = testStores();
    await using store = await postgres!.create();
    const target = store.target as { postgres: string };
    await using log = await EventLog.open({ postgres: target.postgres, pool: 1 });
    await Promise.all([
      log.append(write(invocation('-1', 'session-a'), keyed('key-1'))),
      log.append(write(invocation('-1', 'session-b'), keyed('key-1'))),
    ]);
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 2 });
  });
});
