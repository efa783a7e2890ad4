import { describe, expect, it } from 'vitest';
import { EventLog } from '../src/index.ts';
import { testStores } from '../src/testing.ts';
import { facts, invocation, write } from './support/facts.ts';

describe.each(testStores())('log stats ($name)', (stores) => {
  it('counts one durable commit per lone write and one per group commit, with its facts', async () => {
    await using store = await stores.create();
    const committed: number[] = [];
    await using log = await EventLog.open(store.target, {
      hooks: { afterCommit: ({ size }) => committed.push(size) },
    });
    expect(log.stats()).toEqual({ commits: 0, facts: 0, commitMs: 0, oneTrip: 0, staleHeads: 0 });
    const at = invocation();
    await log.append(write(at, facts.opened()));
    const first = log.stats().commitMs;
    await log.append(write(at, facts.completed('s', [])));
    expect(log.stats()).toMatchObject({ commits: 2, facts: 2 });
    // Each commit adds its own time.
    expect(first).toBeGreaterThan(0);
    expect(log.stats().commitMs).toBeGreaterThan(first);

    const sessions = Array.from({ length: 64 }, (_, index) => invocation(`-${index}`, `session-${index}`));
    await Promise.all(sessions.map((where) => log.append(write(where, facts.opened()))));
    const stats = log.stats();
    expect(stats.facts).toBe(66);
    // Grouped: fewer commits than facts, and exactly the batches that stored something.
    expect(stats.commits).toBe(committed.filter((size) => size > 0).length);
    expect(stats.commits).toBeLessThan(66);
  });

  it('does not count a batch that stored nothing: all refused, or failed', async () => {
    await using store = await stores.create();
    let fail = false;
    await using log = await EventLog.open(store.target, {
      hooks: {
        beforeCommit: () => {
          if (fail) throw new Error('injected failure inside the group commit');
        },
      },
    });
    const at = invocation();
    await log.append(write(at, facts.opened()));
    await expect(log.append(write(at, facts.opened()))).rejects.toMatchObject({
      code: 'duplicate_invocation',
    });
    const once = log.stats();
    expect(once).toMatchObject({ commits: 1, facts: 1 });
    fail = true;
    await expect(log.append(write(at, facts.ended()))).rejects.toMatchObject({ outcome: 'rejected' });
    // Neither the refused batch nor the failed one adds a commit or its time.
    expect(log.stats()).toEqual(once);
    fail = false;
    await log.append(write(at, facts.ended()));
    expect(log.stats()).toMatchObject({ commits: 2, facts: 2 });
    expect(log.stats().commitMs).toBeGreaterThan(once.commitMs);
  });
});
