import { describe, expect, it } from 'vitest';
import { AppendRefusedError, EventLog, EventLogError, recoverExpired } from '../src/index.ts';
import { testStores } from '../src/testing.ts';
import { bounds, facts, invocation, write } from './support/facts.ts';

const provider = { kind: 'provider' as const, stepId: 's1' };
const notified = (operationId: string) =>
  ({ kind: 'tool_notified', operationId, message: 'progress' }) as const;

/** A log holding a lease that renews on its own only if asked (tests drive expiry with SQL). */
async function host(target: Parameters<typeof EventLog.open>[0], hostId: string) {
  const log = await EventLog.open(target);
  await log.holdLease({ hostId, ttlMs: 60_000, renewEveryMs: 20_000 });
  return log;
}

describe.each(testStores())('host leases on $name', (stores) => {
  it('recovery never ends an invocation whose owner holds a live lease, and says whose it is', async () => {
    await using store = await stores.create();
    const a = await host(store.target, 'host-a');
    const b = await host(store.target, 'host-b');
    const at = invocation('-a');
    await a.append(write(at, facts.opened()));
    const report = await recoverExpired(b);
    expect(report.ended).toEqual([]);
    expect(report.live).toHaveLength(1);
    expect(report.live[0]!.ownership).toMatchObject({ lease: 'live', owner: { hostId: 'host-a', epoch: 1 } });
    expect(Date.parse(report.live[0]!.ownership.liveUntil!)).toBeGreaterThan(Date.now() - 120_000);
    const takeover = b.takeOver(write(at, facts.ended()));
    await expect(takeover).rejects.toMatchObject({ code: 'owner_live', outcome: 'rejected' });
    await a.append(write(at, facts.ended()));
    expect((await a.prefix(bounds)).projectInvocation(at.invocationId).terminal).toBe('completed');
    await a.close();
    await b.close();
  });

  it('a host never ends its own running invocations, even when a stall let its lease lapse by the database clock', async () => {
    await using store = await stores.create();
    const a = await host(store.target, 'host-a');
    const at = invocation('-own');
    await a.append(write(at, facts.opened()));
    // host-a's event loop stalled past its lease: by the database's clock it has expired.
    await store.raw(`update hosts set expires_at = renewed_at where host_id = 'host-a'`);
    const own = await recoverExpired(a);
    expect(own.ended, 'its own sweep leaves its own run alone').toEqual([]);
    expect(own.live.map((entry) => entry.invocation)).toEqual([at]);
    // Another host may take it over: from the outside, host-a is gone.
    const b = await host(store.target, 'host-b');
    expect((await recoverExpired(b)).ended).toEqual([at]);
    await a.close();
    await b.close();
  });

  it('a takeover after expiry fences the stale owner: its T2, notifications and end are refused as fenced', async () => {
    await using store = await stores.create();
    const a = await host(store.target, 'host-a');
    const b = await host(store.target, 'host-b');
    const at = invocation('-a');
    await a.append(write(at, facts.opened()));
    await a.append(write(at, facts.completed('s1', [{ id: 'c1' }])));
    await a.append(write(at, facts.dispatched('s1:c1', provider)));
    // host-a stalls past its lease: by the database's clock it has expired.
    await store.raw(`update hosts set expires_at = renewed_at where host_id = 'host-a'`);
    const report = await recoverExpired(b);
    expect(report.ended).toEqual([at]);
    // A batch of the stale owner's writes (the writer thread on SQLite): each one is fenced.
    const late = await Promise.allSettled([
      ...Array.from({ length: 6 }, () => a.append(write(at, notified('s1:c1')))),
      a.append(write(at, facts.failed('s1:c1'))),
      a.append(write(at, facts.ended())),
    ]);
    for (const outcome of late) {
      expect(outcome.status).toBe('rejected');
      const reason = (outcome as PromiseRejectedResult).reason;
      expect(AppendRefusedError.isInstance(reason) && reason.code).toBe('fenced');
    }
    const recovery = await b.invocationRecovery(at, bounds);
    expect(recovery.uncertainOperations, 'the effect stays uncertain, never settled').toEqual(['s1:c1']);
    expect(recovery.ownership?.owner?.hostId, 'the takeover moved the invocation').toBe('host-b');
    const events = (await b.prefix(bounds)).events.map(({ event }) => event.fact.kind);
    expect(events).toEqual(['invocation_opened', 'model_completed', 'tool_dispatched', 'invocation_ended']);
    expect(await b.verifyChain()).toMatchObject({ ok: true });
    await a.close();
    await b.close();
  });

  it('a host id registered again after a restart gets a new epoch; the old epoch is fenced and recoverable', async () => {
    await using store = await stores.create();
    const before = await host(store.target, 'host-r');
    const at = invocation('-r');
    await before.append(write(at, facts.opened()));
    const after = await host(store.target, 'host-r');
    expect(after.lease!.stamp).toEqual({ hostId: 'host-r', epoch: 2 });
    const [unfinished] = await after.unfinishedOwnership();
    expect(unfinished!.ownership).toMatchObject({ lease: 'expired', owner: { hostId: 'host-r', epoch: 1 } });
    expect((await recoverExpired(after)).ended).toEqual([at]);
    await expect(before.append(write(at, notified('x')))).rejects.toMatchObject({ code: 'fenced' });
    await before.close();
    await after.close();
  });

  it('a lease row with an expiry past what the database clock allows is invalid: nothing of it is ended', async () => {
    await using store = await stores.create();
    const a = await host(store.target, 'host-a');
    const b = await host(store.target, 'host-b');
    const at = invocation('-a');
    await a.append(write(at, facts.opened()));
    await store.raw(`update hosts set expires_at = expires_at + 86400000 where host_id = 'host-a'`);
    const report = await recoverExpired(b);
    expect(report.ended).toEqual([]);
    expect(report.invalid[0]!.ownership).toMatchObject({ lease: 'invalid', owner: { hostId: 'host-a' } });
    expect(report.invalid[0]!.ownership.reason).toMatch(/time-to-live/);
    await expect(b.takeOver(write(at, facts.ended()))).rejects.toMatchObject({ code: 'host_row_invalid' });
    expect(await b.unfinishedInvocations()).toEqual([at]);
    await a.close();
    await b.close();
  });

  it('a corrupt host row is refused at registration with a typed error, and its runs are left alone', async () => {
    await using store = await stores.create();
    const a = await host(store.target, 'host-a');
    const at = invocation('-a');
    await a.append(write(at, facts.opened()));
    await a.close();
    await store.raw(`update hosts set ttl_ms = -5 where host_id = 'host-a'`);
    const again = await EventLog.open(store.target);
    await expect(again.holdLease({ hostId: 'host-a', ttlMs: 60_000 })).rejects.toSatisfy(
      (error: unknown) => EventLogError.isInstance(error) && error.code === 'corrupt_row',
    );
    expect((await again.unfinishedOwnership())[0]!.ownership.lease).toBe('invalid');
    await expect(again.holdLease({ hostId: 'bad id with spaces' })).rejects.toThrow(/host id/);
    await again.close();
  });

  it('a host that could not renew in time starts no new run or effect, and writes nothing', async () => {
    await using store = await stores.create();
    let skew = 0;
    const log = await EventLog.open(store.target);
    await log.holdLease({
      hostId: 'host-c',
      ttlMs: 60_000,
      renewEveryMs: 20_000,
      clock: { now: () => skew },
    });
    const at = invocation('-c');
    await log.append(write(at, facts.opened()));
    skew = 50_000; // past four fifths of the lease with no renewal
    await expect(log.append(write(at, facts.dispatched('s1:c1', provider)))).rejects.toMatchObject({
      code: 'lease_expired',
      outcome: 'rejected',
    });
    await expect(log.append(write(invocation('-d', 'other'), facts.opened()))).rejects.toMatchObject({
      code: 'lease_expired',
    });
    await log.lease!.renew();
    await log.append(write(at, facts.dispatched('s1:c1', provider)));
    expect((await log.prefix(bounds)).highWater).toBe(2);
    await log.close();
  });

  it('a host clock far off decides nothing: expiry is read from the database clock', async () => {
    await using store = await stores.create();
    const far = { now: () => performance.now() + 365 * 24 * 3600_000 };
    const a = await EventLog.open(store.target);
    await a.holdLease({ hostId: 'host-far', ttlMs: 60_000, renewEveryMs: 20_000, clock: far });
    const b = await host(store.target, 'host-b');
    await b.append(write(invocation('-b', 'b'), facts.opened()));
    await a.lease!.renew();
    expect((await recoverExpired(a)).ended, 'host-b is live by the database clock').toEqual([]);
    const [row] = (await a.unfinishedOwnership()).map((entry) => entry.ownership);
    expect(Math.abs(Date.parse(row!.liveUntil!) - Date.now())).toBeLessThan(5 * 60_000);
    await a.close();
    await b.close();
  });

  it('a log closed cleanly releases its lease: its unfinished runs are recoverable at once', async () => {
    await using store = await stores.create();
    const a = await host(store.target, 'host-a');
    const at = invocation('-a');
    await a.append(write(at, facts.opened()));
    await a.close();
    const b = await host(store.target, 'host-b');
    expect((await recoverExpired(b)).ended).toEqual([at]);
    await b.append(write(invocation('-b'), facts.opened()));
    await b.close();
  });

  it('registrations of one host id at once each get their own epoch, and only the last one is live and may start a run', async () => {
    await using store = await stores.create();
    await (await EventLog.open(store.target)).close();
    const logs = await Promise.all(Array.from({ length: 6 }, () => EventLog.open(store.target)));
    await Promise.all(
      logs.map((log) => log.holdLease({ hostId: 'host-same', ttlMs: 60_000, renewEveryMs: 20_000 })),
    );
    const epochs = logs.map((log) => log.lease!.stamp.epoch).sort((a, b) => a - b);
    expect(epochs).toEqual([1, 2, 3, 4, 5, 6]);
    const last = logs.find((log) => log.lease!.stamp.epoch === 6)!;
    const first = logs.find((log) => log.lease!.stamp.epoch === 1)!;
    // The superseded epoch starts nothing: its lease is not the row's, by the database.
    await expect(first.append(write(invocation('-1'), facts.opened()))).rejects.toMatchObject({
      code: 'lease_expired',
    });
    await last.append(write(invocation('-6'), facts.opened()));
    expect((await last.unfinishedOwnership())[0]!.ownership.lease).toBe('live');
    await Promise.all(logs.map((log) => log.close()));
  });
});
