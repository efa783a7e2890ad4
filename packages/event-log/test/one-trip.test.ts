import { setTimeout as sleep } from 'node:timers/promises';
import { EventWrite, type Fact, RuntimeEvent } from '@factum/agent-facts';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../src/index.ts';
import { FaultProxy, testStores } from '../src/testing.ts';
import { bounds, facts, invocation, write } from './support/facts.ts';

const [, postgres] = testStores();
const observed: Fact = {
  kind: 'model_observed',
  stepId: 's1',
  observation: { kind: 'text_delta', text: 'streamed' },
};

/** Waits until `eventId` is committed, as another connection sees it. */
async function untilCommitted(url: string, eventId: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (;;) {
      const { rows } = await client.query('select 1 from events where event_id = $1', [eventId]);
      if (rows.length > 0) return;
      await sleep(10);
    }
  } finally {
    await client.end();
  }
}

describe('a PostgreSQL batch sent as one message', () => {
  it('a writer whose answer the network holds after its one-message transaction does not block another writer', async () => {
    await using store = await postgres!.create();
    const url = (store.target as { postgres: string }).postgres;
    const address = new URL(url);
    await using proxy = await FaultProxy.start({ host: address.hostname, port: Number(address.port) });
    // The server would end a transaction left waiting for this client only after a minute.
    const held = await EventLog.open({ postgres: proxy.rewrite(url) }, { transactionBoundMs: 60_000 });
    const other = await EventLog.open(store.target);
    const first = invocation('-a', 'held');
    await held.append(write(first, facts.opened()));
    const before = held.stats();
    proxy.holdAnswers();
    const stalledWrite = write(first, observed);
    let stalledSettled = false;
    const stalled = held.append(stalledWrite).finally(() => {
      stalledSettled = true;
    });
    // The whole transaction reached the server and committed; only its answer is held.
    // On the two-trip path the lock would be held until the client's second message,
    // which waits for the held answer: nothing would commit.
    await untilCommitted(url, stalledWrite.event.id);
    const second = invocation('-b', 'other');
    await other.append(write(second, facts.opened()));
    await other.append(write(second, facts.ended()));
    expect(stalledSettled, 'the other writer went through while the first still waits').toBe(false);
    proxy.heal();
    const stored = await stalled;
    expect(held.stats().oneTrip - before.oneTrip).toBe(1);
    const events = (await other.prefix(bounds)).events;
    expect(events.map(({ event }) => [event.invocation.sessionId, event.fact.kind])).toEqual([
      ['held', 'invocation_opened'],
      ['held', 'model_observed'],
      ['other', 'invocation_opened'],
      ['other', 'invocation_ended'],
    ]);
    expect(events[1]!.sequence).toBe(stored.sequence);
    expect(await other.verifyChain()).toMatchObject({ ok: true, events: 4 });
    await other.close();
    await held.close();
  });

  it('a guessed head another writer moved writes nothing, falls back to reading the head, and both batches commit', async () => {
    await using store = await postgres!.create();
    const a = await EventLog.open(store.target);
    const b = await EventLog.open(store.target);
    const atA = invocation('-a', 'a');
    const atB = invocation('-b', 'b');
    await a.append(write(atA, facts.opened()));
    await a.append(write(atA, observed));
    expect(a.stats()).toMatchObject({ oneTrip: 1, staleHeads: 0 });
    // B moves the head after A cached it: A's next guess is stale.
    await b.append(write(atB, facts.opened()));
    const batch = a.commitTogether([write(atA, observed), write(atA, observed)]);
    const receipts = await Promise.all(batch);
    expect(receipts.map((receipt) => receipt.sequence)).toEqual([4, 5]);
    expect(a.stats()).toMatchObject({ commits: 3, oneTrip: 1, staleHeads: 1 });
    // Having guessed wrong, A reads the head first until it has found it unmoved twice.
    await a.append(write(atA, observed));
    await a.append(write(atA, observed));
    expect(a.stats()).toMatchObject({ oneTrip: 1, staleHeads: 1 });
    await a.append(write(atA, facts.ended()));
    expect(a.stats()).toMatchObject({ oneTrip: 2, staleHeads: 1 });
    await b.append(write(atB, facts.ended()));
    const kinds = (await b.prefix(bounds)).events.map(
      ({ event }) => `${event.invocation.sessionId}:${event.fact.kind}`,
    );
    expect(kinds).toEqual([
      'a:invocation_opened',
      'a:model_observed',
      'b:invocation_opened',
      'a:model_observed',
      'a:model_observed',
      'a:model_observed',
      'a:model_observed',
      'a:invocation_ended',
      'b:invocation_ended',
    ]);
    expect(await a.verifyChain()).toMatchObject({ ok: true, events: 9 });
    await a.close();
    await b.close();
  });

  it('keeps the two-trip path’s refusals: a repeated id is refused alone, a write after the end is refused by the rules', async () => {
    await using store = await postgres!.create();
    const log = await EventLog.open(store.target);
    const at = invocation('-a');
    await log.append(write(at, facts.opened()));
    const once = write(at, observed);
    await log.append(once);
    // Accepted by the rules (all cached: one message), caught by the event-id index.
    const again = EventWrite.plain(RuntimeEvent.create(at, observed, { id: () => once.event.id }));
    const [first, second] = await Promise.allSettled(log.commitTogether([again, write(at, observed)]));
    expect(first).toMatchObject({ status: 'rejected', reason: { code: 'duplicate_event' } });
    expect(second?.status).toBe('fulfilled');
    await log.append(write(at, facts.ended()));
    await expect(log.append(write(at, observed))).rejects.toMatchObject({ code: 'sealed_invocation' });
    const kinds = (await log.prefix(bounds)).events.map(({ event }) => event.fact.kind);
    expect(kinds).toEqual(['invocation_opened', 'model_observed', 'model_observed', 'invocation_ended']);
    expect(log.stats().oneTrip).toBeGreaterThanOrEqual(2);
    expect((await log.verifyChain()).ok).toBe(true);
    await log.close();
  });
});
