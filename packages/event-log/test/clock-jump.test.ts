import { describe, expect, it } from 'vitest';
import { AppendRefusedError, EventLog, recoverExpired } from '../src/index.ts';
import { testStores } from '../src/testing.ts';
import { bounds, facts, invocation, write } from './support/facts.ts';

const provider = { kind: 'provider' as const, stepId: 's1' };
const hour = 3600_000;

/** A host clock that a test can step, as an administrator or NTP steps a wall clock. */
function steppedClock() {
  let offset = 0;
  return {
    clock: { now: () => performance.now() + offset },
    step: (ms: number) => {
      offset += ms;
    },
  };
}

describe.each(testStores())('a host clock that jumps mid-lease on $name', (stores) => {
  it('forward: the host stops starting effects on its own, with a typed refusal, and no live run is ended', async () => {
    await using store = await stores.create();
    const { clock, step } = steppedClock();
    const a = await EventLog.open(store.target);
    const lease = await a.holdLease({ hostId: 'host-a', ttlMs: 60_000, renewEveryMs: 20_000, clock });
    const at = invocation('-a');
    await a.append(write(at, facts.opened()));
    await a.append(write(at, facts.completed('s1', [{ id: 'c1' }])));
    step(hour);
    expect(lease.canDispatch()).toBe(false);
    expect(a.mayStartEffect()).toBe(false);
    const refused = await a.append(write(at, facts.dispatched('s1:c1', provider))).catch((error) => error);
    expect(AppendRefusedError.isInstance(refused)).toBe(true);
    expect(refused).toMatchObject({ code: 'lease_expired', outcome: 'rejected' });
    // By the database's clock the lease is live: another host ends nothing of it.
    const b = await EventLog.open(store.target);
    await b.holdLease({ hostId: 'host-b', ttlMs: 60_000, renewEveryMs: 20_000 });
    expect((await recoverExpired(b)).ended).toEqual([]);
    expect((await b.invocationRecovery(at, bounds)).ended).toBe(false);
    // The next renewal measures its deadline on the stepped clock: work starts again.
    await lease.renew();
    expect(lease.canDispatch()).toBe(true);
    await a.append(write(at, facts.dispatched('s1:c1', provider)));
    const kinds = (await b.prefix(bounds)).events.map(({ event }) => event.fact.kind);
    expect(kinds).toEqual(['invocation_opened', 'model_completed', 'tool_dispatched']);
    await b.close();
    await a.close();
  });

  it('backward: the host believes its lease live longer, but the database’s clock refuses its T1 and nothing of it is written', async () => {
    await using store = await stores.create();
    const { clock, step } = steppedClock();
    const a = await EventLog.open(store.target);
    const lease = await a.holdLease({ hostId: 'host-a', ttlMs: 60_000, renewEveryMs: 20_000, clock });
    const at = invocation('-a');
    await a.append(write(at, facts.opened()));
    await a.append(write(at, facts.completed('s1', [{ id: 'c1' }])));
    step(-hour);
    // Meanwhile the lease ran out by the database's clock (the host stalled).
    await store.raw(`update hosts set expires_at = renewed_at where host_id = 'host-a'`);
    expect(lease.canDispatch(), 'the host still believes it').toBe(true);
    await expect(a.append(write(at, facts.dispatched('s1:c1', provider)))).rejects.toMatchObject({
      code: 'lease_expired',
      outcome: 'rejected',
    });
    const kinds = (await a.prefix(bounds)).events.map(({ event }) => event.fact.kind);
    expect(kinds).toEqual(['invocation_opened', 'model_completed']);
    expect((await a.verifyChain()).ok).toBe(true);
    await a.close();
  });
});
