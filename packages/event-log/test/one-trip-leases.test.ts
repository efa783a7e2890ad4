import { setTimeout as sleep } from 'node:timers/promises';
import type { Fact } from '@factum/agent-facts';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../src/index.ts';
import { FaultProxy, testStores } from '../src/testing.ts';
import { bounds, facts, invocation, write } from './support/facts.ts';

const [, postgres] = testStores();
const provider = { kind: 'provider' as const, stepId: 's1' };
const notified = (operationId: string): Fact => ({ kind: 'tool_notified', operationId, message: 'progress' });
const lease = { hostId: 'host-a', ttlMs: 60_000, renewEveryMs: 20_000 };

/** Runs `body` with a plain connection to `url`, outside the log. */
async function withClient<T>(url: string, body: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

/** Waits until `eventId` is committed, as another connection sees it. */
async function untilCommitted(url: string, eventId: string): Promise<void> {
  await withClient(url, async (client) => {
    for (;;) {
      const { rows } = await client.query('select 1 from events where event_id = $1', [eventId]);
      if (rows.length > 0) return;
      await sleep(10);
    }
  });
}

/**
 * Waits until the one message that carries `eventId` failed inside the server while its
 * client has not answered (the network holds the answer, so no `ROLLBACK` can have come),
 * and returns its text. The transaction ended there: the connection is idle, and no
 * advisory lock — the chain's — is held by anyone.
 */
async function untilFailedInServer(url: string, eventId: string): Promise<string> {
  return withClient(url, async (client) => {
    for (;;) {
      const { rows } = await client.query<{ query: string }>(
        `select query from pg_stat_activity where state = 'idle' and position($1 in query) > 0 and datname = current_database()`,
        [eventId],
      );
      if (rows[0] !== undefined) {
        // This database's locks only: other suites' databases share the server.
        const locks = await client.query(
          `select 1 from pg_locks l join pg_database d on d.oid = l.database
            where l.locktype = 'advisory' and d.datname = current_database()`,
        );
        expect(locks.rows, 'the failed message left no lock behind').toEqual([]);
        return rows[0].query;
      }
      await sleep(10);
    }
  });
}

/** A log through `proxy` holding a lease, with one run that asked for calls `ids`. */
async function leasedRun(url: string, proxy: FaultProxy, ids: string[]) {
  // The server would end a transaction left waiting for this client only after a minute.
  const log = await EventLog.open({ postgres: proxy.rewrite(url) }, { transactionBoundMs: 60_000 });
  await log.holdLease(lease);
  const at = invocation('-a', 'held');
  await log.append(write(at, facts.opened()));
  await log.append(
    write(
      at,
      facts.completed(
        's1',
        ids.map((id) => ({ id })),
      ),
    ),
  );
  return { log, at };
}

/**
 * A log holding a lease after one whole run of session `held`: that run read the
 * session, so the cache knows it and its (idle) state.
 */
async function afterOneRun(target: Parameters<typeof EventLog.open>[0]): Promise<EventLog> {
  const log = await EventLog.open(target);
  await log.holdLease(lease);
  const first = invocation('-a', 'held');
  await log.append(write(first, facts.opened()));
  await log.append(write(first, facts.ended()));
  return log;
}

describe('a PostgreSQL batch that starts leased work, sent as one message', () => {
  it('a T1 under a live lease commits in one message, and a writer whose answer the network holds does not block another', async () => {
    await using store = await postgres!.create();
    const url = (store.target as { postgres: string }).postgres;
    const address = new URL(url);
    await using proxy = await FaultProxy.start({ host: address.hostname, port: Number(address.port) });
    const { log: held, at } = await leasedRun(url, proxy, ['c1']);
    const other = await EventLog.open(store.target);
    const before = held.stats();
    proxy.holdAnswers();
    const t1 = write(at, facts.dispatched('s1:c1', provider));
    let settled = false;
    const stalled = held.append(t1).finally(() => {
      settled = true;
    });
    // The whole T1 transaction, its lease check included, reached the server and
    // committed; only its answer is held. On the two-trip path the lease is read under
    // the lock and the client's second message waits for that answer: nothing would commit.
    await untilCommitted(url, t1.event.id);
    const second = invocation('-b', 'other');
    await other.append(write(second, facts.opened()));
    await other.append(write(second, facts.ended()));
    expect(settled, 'the other writer went through while the T1 still waits').toBe(false);
    proxy.heal();
    const stored = await stalled;
    expect(held.stats().oneTrip - before.oneTrip).toBe(1);
    expect(held.mayStartEffect(t1.event)).toBe(true);
    const events = (await other.prefix(bounds)).events;
    expect(events.map(({ event }) => `${event.invocation.sessionId}:${event.fact.kind}`)).toEqual([
      'held:invocation_opened',
      'held:model_completed',
      'held:tool_dispatched',
      'other:invocation_opened',
      'other:invocation_ended',
    ]);
    expect(events[2]!.sequence).toBe(stored.sequence);
    expect(await other.verifyChain()).toMatchObject({ ok: true, events: 5 });
    await other.close();
    await held.close();
  });

  it('a T1 whose lease expired by the database’s clock is refused lease_expired inside its one message; the batch’s other writes go on', async () => {
    await using store = await postgres!.create();
    const url = (store.target as { postgres: string }).postgres;
    const address = new URL(url);
    await using proxy = await FaultProxy.start({ host: address.hostname, port: Number(address.port) });
    const { log, at } = await leasedRun(url, proxy, ['c1', 'c2']);
    const before = log.stats().oneTrip;
    await log.append(write(at, facts.dispatched('s1:c1', provider)));
    expect(log.stats().oneTrip - before, 'the first T1 went as one message').toBe(1);
    // The host stalled: by the database's clock its lease is gone; its own clock says live.
    await store.raw(`update hosts set expires_at = renewed_at where host_id = 'host-a'`);
    proxy.holdAnswers();
    const t1 = write(at, facts.dispatched('s1:c2', provider));
    const [refused, note] = log.commitTogether([t1, write(at, notified('s1:c1'))]);
    refused!.catch(() => undefined);
    // The server got the whole transaction — the chain's lock and the rows in one message —
    // failed it on the lease and ended it, before this client answered anything.
    const message = await untilFailedInServer(url, t1.event.id);
    expect(message).toContain('pg_advisory_xact_lock');
    expect(message).toContain('insert into "events"');
    proxy.heal();
    await expect(refused).rejects.toMatchObject({ code: 'lease_expired', outcome: 'rejected' });
    await expect(refused).rejects.toThrow(/expired at .* by the database's clock/);
    // The note records the past: it is judged without the T1, as on the two-trip path.
    await note;
    const kinds = (await log.prefix(bounds)).events.map(({ event }) => event.fact.kind);
    expect(kinds).toEqual(['invocation_opened', 'model_completed', 'tool_dispatched', 'tool_notified']);
    const reader = await EventLog.open(store.target);
    const ids = (await reader.prefix(bounds)).events.map(({ event }) => event.id);
    expect(ids).not.toContain(t1.event.id);
    expect(await reader.verifyChain()).toMatchObject({ ok: true, events: 4 });
    await reader.close();
    await log.close();
  });

  it('a lease row from the future is refused inside the one message, nothing written', async () => {
    await using store = await postgres!.create();
    const url = (store.target as { postgres: string }).postgres;
    const address = new URL(url);
    await using proxy = await FaultProxy.start({ host: address.hostname, port: Number(address.port) });
    const { log, at } = await leasedRun(url, proxy, ['c1']);
    await store.raw(`update hosts set expires_at = expires_at + 864000000 where host_id = 'host-a'`);
    proxy.holdAnswers();
    const dispatch = write(at, facts.dispatched('s1:c1', provider));
    const t1 = log.append(dispatch);
    t1.catch(() => undefined);
    expect(await untilFailedInServer(url, dispatch.event.id)).toContain('insert into "events"');
    proxy.heal();
    await expect(t1).rejects.toMatchObject({ code: 'lease_expired' });
    await expect(t1).rejects.toThrow(/cannot be trusted .*further ahead than its time-to-live/);
    const kinds = (await log.prefix(bounds)).events.map(({ event }) => event.fact.kind);
    expect(kinds).toEqual(['invocation_opened', 'model_completed']);
    await log.close();
  });

  it('a T1 under an epoch since registered again is refused lease_expired in the one message', async () => {
    await using store = await postgres!.create();
    const url = (store.target as { postgres: string }).postgres;
    const address = new URL(url);
    await using proxy = await FaultProxy.start({ host: address.hostname, port: Number(address.port) });
    const { log, at } = await leasedRun(url, proxy, ['c1']);
    await store.raw(`update hosts set epoch = epoch + 1 where host_id = 'host-a'`);
    proxy.holdAnswers();
    const dispatch = write(at, facts.dispatched('s1:c1', provider));
    const t1 = log.append(dispatch);
    t1.catch(() => undefined);
    expect(await untilFailedInServer(url, dispatch.event.id)).toContain('insert into "events"');
    proxy.heal();
    await expect(t1).rejects.toMatchObject({ code: 'lease_expired' });
    await expect(t1).rejects.toThrow(/was registered again \(epoch 2\)/);
    const kinds = (await log.prefix(bounds)).events.map(({ event }) => event.fact.kind);
    expect(kinds).toEqual(['invocation_opened', 'model_completed']);
    await log.close();
  });

  it('a run’s opening batched with its first step and T1 commits in one message: the later writes of the invocation it opens are judged on its effect', async () => {
    await using store = await postgres!.create();
    const log = await afterOneRun(store.target);
    const second = invocation('-b', 'held');
    const before = log.stats().oneTrip;
    const outcomes = await Promise.all(
      log.commitTogether([
        write(second, facts.opened()),
        write(second, facts.completed('s1', [{ id: 'c1' }])),
        write(second, facts.dispatched('s1:c1', provider)),
      ]),
    );
    expect(log.stats().oneTrip - before, 'the opening, the step and the T1 went as one message').toBe(1);
    expect(outcomes.map(({ sequence }) => sequence)).toEqual([3, 4, 5]);
    const reader = await EventLog.open(store.target);
    const kinds = (await reader.prefix(bounds)).events.map(
      ({ event }) => `${event.invocation.invocationId}:${event.fact.kind}`,
    );
    expect(kinds).toEqual([
      'invocation-a:invocation_opened',
      'invocation-a:invocation_ended',
      'invocation-b:invocation_opened',
      'invocation-b:model_completed',
      'invocation-b:tool_dispatched',
    ]);
    expect(await reader.verifyChain()).toMatchObject({ ok: true, events: 5 });
    await reader.close();
    await log.close();
  });

  it('an opening taken for new in one message that the invocations table already holds writes none of its batch, runs again reading it, and is refused duplicate_invocation with the writes after it', async () => {
    await using store = await postgres!.create();
    const log = await afterOneRun(store.target);
    const taken = invocation('-b', 'held');
    // A row the cache never saw, written without moving the chain's head.
    await store.raw(
      `insert into invocations (session_id, invocation_id, turn_id, run_id, opened_sequence, ended_sequence, terminal) values ('held', '${taken.invocationId}', '${taken.turnId}', '${taken.runId}', 1, 2, 'completed')`,
    );
    const before = log.stats().oneTrip;
    const [opened, completed] = log.commitTogether([
      write(taken, facts.opened()),
      write(taken, facts.completed('s1', [{ id: 'c1' }])),
    ]);
    await expect(opened).rejects.toMatchObject({ code: 'duplicate_invocation' });
    await expect(completed).rejects.toMatchObject({ outcome: 'rejected' });
    expect(log.stats().oneTrip, 'the second run reads the invocation: two trips').toBe(before);
    const kinds = (await log.prefix(bounds)).events.map(({ event }) => event.fact.kind);
    expect(kinds).toEqual(['invocation_opened', 'invocation_ended']);
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 2 });
    await log.close();
  });

  it('a dispatch taken for new in one message that the operations table already holds writes nothing, runs again reading it, and is refused duplicate_dispatch', async () => {
    await using store = await postgres!.create();
    const log = await EventLog.open(store.target);
    await log.holdLease(lease);
    const at = invocation('-a', 'held');
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.completed('s1', [{ id: 'c1' }, { id: 'c2' }])));
    // A row the cache never saw, written without moving the chain's head.
    await store.raw(
      `insert into operations (session_id, operation_id, invocation_id, state, sequence) values ('held', 's1:c1', '${at.invocationId}', 'dispatched', 2)`,
    );
    const before = log.stats();
    await expect(log.append(write(at, facts.dispatched('s1:c1', provider)))).rejects.toMatchObject({
      code: 'duplicate_dispatch',
    });
    expect(log.stats().oneTrip, 'the second run reads the operation: two trips').toBe(before.oneTrip);
    await log.append(write(at, facts.dispatched('s1:c2', provider)));
    const kinds = (await log.prefix(bounds)).events.map(({ event }) => event.fact.kind);
    expect(kinds).toEqual(['invocation_opened', 'model_completed', 'tool_dispatched']);
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 3 });
    await log.close();
  });
});
