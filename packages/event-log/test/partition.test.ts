import { setTimeout as sleep } from 'node:timers/promises';
import { CommitError } from '@factum/agent-facts';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { AppendRefusedError, EventLog, type EventLogOptions, recoverExpired } from '../src/index.ts';
import { FaultProxy, testStores } from '../src/testing.ts';
import { bounds, facts, invocation, write } from './support/facts.ts';

const provider = { kind: 'provider' as const, stepId: 's1' };
const notified = (operationId: string) =>
  ({ kind: 'tool_notified', operationId, message: 'progress' }) as const;

describe.each(testStores())('a writer’s own lease, checked in the T1’s transaction on $name', (stores) => {
  it('a T1 or an opening under a lease expired by the database’s clock is refused lease_expired, though the host still believes it live', async () => {
    await using store = await stores.create();
    const log = await EventLog.open(store.target);
    const lease = await log.holdLease({ hostId: 'host-a', ttlMs: 60_000, renewEveryMs: 20_000 });
    const at = invocation('-a');
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.completed('s1', [{ id: 'c1' }, { id: 'c2' }])));
    await log.append(write(at, facts.dispatched('s1:c1', provider)));
    // The host's process or network stalled: by the database's clock its lease is gone,
    // while its own clock still says it may dispatch.
    await store.raw(`update hosts set expires_at = renewed_at where host_id = 'host-a'`);
    expect(lease.canDispatch()).toBe(true);
    const t1 = log.append(write(at, facts.dispatched('s1:c2', provider)));
    await expect(t1).rejects.toMatchObject({ code: 'lease_expired', outcome: 'rejected' });
    const opening = log.append(write(invocation('-b', 'other'), facts.opened()));
    await expect(opening).rejects.toMatchObject({ code: 'lease_expired' });
    // What records the past is still accepted from the owner: its progress and its T2.
    await log.append(write(at, notified('s1:c1')));
    await log.append(write(at, facts.failed('s1:c1')));
    const kinds = (await log.prefix(bounds)).events.map(({ event }) => event.fact.kind);
    expect(kinds.filter((kind) => kind === 'tool_dispatched')).toHaveLength(1);
    await log.close();
  });

  it('an effect whose T1 was written under an epoch since lost never starts, though the host registered again and may dispatch', async () => {
    await using store = await stores.create();
    const log = await EventLog.open(store.target);
    const lease = await log.holdLease({ hostId: 'host-a', ttlMs: 60_000, renewEveryMs: 20_000 });
    const at = invocation('-a');
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.completed('s1', [{ id: 'c1' }])));
    const t1 = write(at, facts.dispatched('s1:c1', provider));
    await log.append(t1);
    expect(log.mayStartEffect(t1.event)).toBe(true);
    // The answer came late: meanwhile the lease expired and was registered again.
    await store.raw(`update hosts set expires_at = renewed_at where host_id = 'host-a'`);
    await lease.renew();
    expect(lease.stamp.epoch).toBe(2);
    expect(lease.canDispatch()).toBe(true);
    expect(log.mayStartEffect(t1.event), 'the T1 belongs to the lost epoch').toBe(false);
    const fresh = invocation('-b', 'other');
    await log.append(write(fresh, facts.opened()));
    await log.append(write(fresh, facts.completed('s1', [{ id: 'c9' }])));
    const t1b = write(fresh, facts.dispatched('s1:c9', provider));
    await log.append(t1b);
    expect(log.mayStartEffect(t1b.event)).toBe(true);
    await log.close();
  });

  it('a lease row from the future is not trusted: nothing starts under it, and no live run is ended on its account', async () => {
    await using store = await stores.create();
    const log = await EventLog.open(store.target);
    await log.holdLease({ hostId: 'host-a', ttlMs: 60_000, renewEveryMs: 20_000 });
    const at = invocation('-a');
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.completed('s1', [{ id: 'c1' }])));
    await store.raw(`update hosts set expires_at = expires_at + 864000000 where host_id = 'host-a'`);
    await expect(log.append(write(at, facts.dispatched('s1:c1', provider)))).rejects.toMatchObject({
      code: 'lease_expired',
    });
    const other = await EventLog.open(store.target);
    await other.holdLease({ hostId: 'host-b', ttlMs: 60_000, renewEveryMs: 20_000 });
    expect((await recoverExpired(other)).ended).toEqual([]);
    expect((await other.invocationRecovery(at, bounds)).ended).toBe(false);
    await other.close();
    await log.close();
  });
});

/** Waits until the database says `hostId`'s lease has expired (its renewals are held). */
async function untilExpired(url: string, hostId: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (;;) {
      const { rows } = await client.query<{ expired: boolean }>(
        `select expires_at < (extract(epoch from clock_timestamp()) * 1000)::bigint as expired from hosts where host_id = $1`,
        [hostId],
      );
      if (rows[0]?.expired) return;
      await sleep(100);
    }
  } finally {
    await client.end();
  }
}

/** A PostgreSQL log reached through `proxy`, whose next batch's last message trips `onCommit`. */
async function proxiedLog(url: string, proxy: FaultProxy, options: EventLogOptions = {}) {
  let armed: (() => void) | undefined;
  const log = await EventLog.open(
    { postgres: proxy.rewrite(url) },
    {
      ...options,
      hooks: {
        beforeCommit: () => {
          const trip = armed;
          armed = undefined;
          trip?.();
        },
      },
    },
  );
  return { log, arm: (trip: () => void) => (armed = trip) };
}

describe('partitions between a host and PostgreSQL', () => {
  const [, postgres] = testStores();

  it('a T1 batch the network holds past the lease is refused lease_expired when it arrives, and nothing of it is written', async () => {
    await using store = await postgres!.create();
    const url = (store.target as { postgres: string }).postgres;
    const address = new URL(url);
    await using proxy = await FaultProxy.start({ host: address.hostname, port: Number(address.port) });
    // The server keeps the stalled transaction open: the guard that travels with COMMIT
    // is what refuses it.
    const { log, arm } = await proxiedLog(url, proxy, { transactionBoundMs: 60_000 });
    await log.holdLease({ hostId: 'host-a', ttlMs: 1_000, renewEveryMs: 300 });
    const at = invocation('-a');
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.completed('s1', [{ id: 'c1' }])));
    arm(() => proxy.stall());
    const t1 = log.append(write(at, facts.dispatched('s1:c1', provider)));
    t1.catch(() => undefined);
    await untilExpired(url, 'host-a');
    proxy.heal();
    await expect(t1).rejects.toMatchObject({ code: 'lease_expired', outcome: 'rejected' });
    const reader = await EventLog.open(store.target);
    const kinds = (await reader.prefix(bounds)).events.map(({ event }) => event.fact.kind);
    expect(kinds).not.toContain('tool_dispatched');
    await reader.close();
    await log.close();
  });

  it('a T1 whose answer the network holds past the lease resolves, and the log then says no effect may start', async () => {
    await using store = await postgres!.create();
    const url = (store.target as { postgres: string }).postgres;
    const address = new URL(url);
    await using proxy = await FaultProxy.start({ host: address.hostname, port: Number(address.port) });
    const { log, arm } = await proxiedLog(url, proxy, { transactionBoundMs: 60_000 });
    const lease = await log.holdLease({ hostId: 'host-a', ttlMs: 1_000, renewEveryMs: 300 });
    const at = invocation('-a');
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.completed('s1', [{ id: 'c1' }])));
    expect(log.mayStartEffect()).toBe(true);
    const epoch = lease.stamp.epoch;
    arm(() => proxy.holdAnswers());
    const dispatch = write(at, facts.dispatched('s1:c1', provider));
    const t1 = log.append(dispatch);
    await untilExpired(url, 'host-a');
    proxy.heal();
    await t1;
    // Once healed, the host may already have registered again under a new epoch: that
    // lease owns nothing the T1 was written under.
    expect(log.mayStartEffect(dispatch.event), 'the effect must not start').toBe(false);
    expect(lease.canDispatch() && lease.stamp.epoch === epoch, 'the T1’s lease is not live').toBe(false);
    await log.close();
  });

  it('a stalled host holding the chain’s lock stops the others only until the server ends its transaction', async () => {
    await using store = await postgres!.create();
    const url = (store.target as { postgres: string }).postgres;
    const address = new URL(url);
    await using proxy = await FaultProxy.start({ host: address.hostname, port: Number(address.port) });
    const { log: stalled, arm } = await proxiedLog(url, proxy, { transactionBoundMs: 300 });
    const survivor = await EventLog.open(store.target);
    const at = invocation('-a', 'stalled');
    await stalled.append(write(at, facts.opened()));
    arm(() => proxy.stall());
    // A write in a session its cache lacks reads that session under the lock: the
    // two-trip path. Its transaction holds the advisory lock, and its last message
    // never arrives.
    const held = stalled.append(write(invocation('-c', 'fresh'), facts.opened()));
    held.catch(() => undefined);
    while (proxy.mode !== 'stall') await sleep(10);
    const other = invocation('-b', 'survivor');
    await survivor.append(write(other, facts.opened()));
    await survivor.append(write(other, facts.ended()));
    proxy.heal();
    const outcome = await held.then(
      () => 'stored',
      (error: unknown) => (CommitError.isInstance(error) ? error.outcome : 'untyped'),
    );
    expect(['rejected', 'outcome_unknown']).toContain(outcome);
    // The pool heals: the next write of the stalled host goes through.
    await stalled.append(write(at, facts.ended()));
    expect((await survivor.prefix(bounds)).projectInvocation(at.invocationId).terminal).toBe('completed');
    await survivor.close();
    await stalled.close();
  });

  it('a store that answers slowly forever: writes fail as typed commit errors, the lease lapses locally, and all heals after', async () => {
    await using store = await postgres!.create();
    const url = (store.target as { postgres: string }).postgres;
    const address = new URL(url);
    await using proxy = await FaultProxy.start({ host: address.hostname, port: Number(address.port) });
    const log = await EventLog.open({ postgres: proxy.rewrite(url) }, { transactionBoundMs: 200 });
    const lease = await log.holdLease({ hostId: 'host-a', ttlMs: 1_000, renewEveryMs: 300 });
    const at = invocation('-a');
    await log.append(write(at, facts.opened()));
    proxy.stall();
    const late = await log.append(write(at, facts.completed('s1', [{ id: 'c1' }]))).then(
      () => 'stored',
      (error: unknown) => (CommitError.isInstance(error) ? error.outcome : 'untyped'),
    );
    expect(['rejected', 'outcome_unknown']).toContain(late);
    expect(lease.canDispatch()).toBe(false);
    expect(log.mayStartEffect()).toBe(false);
    proxy.heal();
    // The renewal that had no answer gave up: the next one re-registers the lapsed lease.
    while (!lease.canDispatch()) await sleep(50);
    const other = invocation('-b', 'other');
    await log.append(write(other, facts.opened()));
    expect(lease.status().lost).toBeGreaterThanOrEqual(1);
    await log.close();
  });

  it('connections cut or terminated under running writes fail those writes with typed errors; the process lives and the pool heals', async () => {
    await using store = await postgres!.create();
    const url = (store.target as { postgres: string }).postgres;
    const address = new URL(url);
    await using proxy = await FaultProxy.start({ host: address.hostname, port: Number(address.port) });
    const log = await EventLog.open({ postgres: proxy.rewrite(url) });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const failures: unknown[] = [];
    let stored = 0;
    for (let round = 0; round < 6; round += 1) {
      const at = invocation(`-${round}`, `session-${round}`);
      // Settled from the start: a write may fail while the termination query is still
      // out, and a rejection nobody listens to yet is an unhandled one.
      const writes = Promise.allSettled([
        log.append(write(at, facts.opened())),
        log.append(write(at, facts.ended())),
      ]);
      if (round % 2 === 0) proxy.cut();
      else {
        await admin.query(
          `select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
        );
      }
      for (const outcome of await writes) {
        if (outcome.status === 'fulfilled') stored += 1;
        else failures.push(outcome.reason);
      }
    }
    await admin.end();
    for (const failure of failures) {
      expect(CommitError.isInstance(failure) || AppendRefusedError.isInstance(failure)).toBe(true);
    }
    // A connection the last termination doomed may still sit idle in the pool until its
    // socket reports the termination: a write that draws it fails, typed and with nothing
    // stored, and the next write takes another connection. The pool heals within its size.
    const at = invocation('-after', 'after');
    const healed = async (fact: Parameters<typeof write>[1]) => {
      for (let attempt = 1; ; attempt += 1) {
        try {
          return await log.append(write(at, fact));
        } catch (error) {
          expect(CommitError.isInstance(error) && error.outcome).toBe('rejected');
          if (attempt === 10) throw error;
        }
      }
    };
    await healed(facts.opened());
    await healed(facts.ended());
    expect(stored + failures.length).toBe(12);
    await log.close();
  });
});
