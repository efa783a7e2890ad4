import { EventWrite, RuntimeEvent } from '@factum/agent-facts';
import { describe, expect, it } from 'vitest';
import { AppendRefusedError, EventLog } from '../src/index.ts';
import { testStores } from '../src/testing.ts';
import { bounds, facts, invocation, write } from './support/facts.ts';

const observed = (index: number) =>
  ({
    kind: 'model_observed',
    stepId: 's',
    observation: { kind: 'text_delta', text: `chunk ${index}` },
  }) as const;

describe.each(testStores())('commitTogether ($name)', (stores) => {
  it('commits a group larger than maxBatch in one transaction, never split by other writers', async () => {
    await using store = await stores.create();
    const batches: string[][] = [];
    await using log = await EventLog.open(store.target, {
      maxBatch: 4,
      hooks: { afterCommit: ({ eventIds }) => batches.push([...eventIds]) },
    });
    const at = invocation();
    const others = Array.from({ length: 6 }, (_, index) => invocation(`-${index}`, `other-${index}`));
    await log.append(write(at, facts.opened()));
    batches.length = 0;
    const group = Array.from({ length: 9 }, (_, index) => write(at, observed(index)));
    const lone = others.map((other) => log.append(write(other, facts.opened())));
    const together = log.commitTogether(group);
    const more = others.map((other) => log.append(write(other, observed(0))));
    const receipts = await Promise.all(together);
    await Promise.all([...lone, ...more]);
    const ids = group.map((one) => one.event.id);
    // One batch holds the whole group, in its order, and nothing else of it is anywhere else.
    const holding = batches.filter((batch) => batch.some((id) => ids.includes(id)));
    expect(holding).toHaveLength(1);
    expect(holding[0]!.filter((id) => ids.includes(id))).toEqual(ids);
    expect(receipts.map((receipt) => receipt.sequence)).toEqual(
      receipts.map((_, index) => receipts[0]!.sequence + index),
    );
    expect(await log.verifyChain()).toMatchObject({ ok: true });
  });

  it('a write that does not parse refuses the whole group, and nothing of it is written', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    const at = invocation();
    await log.append(write(at, facts.opened()));
    const good = write(at, observed(1));
    const event = RuntimeEvent.create(at, facts.completed('s', []));
    const bad = EventWrite.plain({
      ...event,
      fact: { ...event.fact, stepId: 42 },
    } as unknown as RuntimeEvent);
    const results = await Promise.allSettled(log.commitTogether([good, bad, write(at, facts.ended())]));
    for (const result of results) {
      expect(result.status).toBe('rejected');
      const reason = (result as PromiseRejectedResult).reason;
      expect(AppendRefusedError.isInstance(reason) && reason.code).toBe('invalid_write');
    }
    expect((await log.prefix(bounds)).highWater).toBe(1);
  });

  it('the rules judge each write of a group in order, seeing the ones before it', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    const at = invocation();
    const results = await Promise.allSettled(
      log.commitTogether([write(at, facts.opened()), write(at, observed(0)), write(at, facts.ended())]),
    );
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    const late = await Promise.allSettled(log.commitTogether([write(at, observed(1))]));
    expect((late[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'sealed_invocation' });
    expect((await log.prefix(bounds)).highWater).toBe(3);
  });
});

describe.each(testStores())('sessionHead ($name)', (stores) => {
  it('equals the high water and digest of the session prefix, and is empty for a new session', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    const empty = await log.sessionHead('session');
    const prefixOf = async () => log.scopedPrefix({ session: 'session' }, bounds);
    expect(empty).toEqual({ highWater: 0, digest: (await prefixOf()).digest });
    const at = invocation();
    await log.append(write(at, facts.opened()));
    await log.append(write(invocation('-x', 'elsewhere'), facts.opened()));
    await log.append(write(at, observed(0)));
    await log.append(write(invocation('-y', 'elsewhere-too'), facts.opened()));
    const prefix = await prefixOf();
    expect(await log.sessionHead('session')).toEqual({ highWater: prefix.highWater, digest: prefix.digest });
    expect(prefix.highWater).toBe(3);
  });
});
