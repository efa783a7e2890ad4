import { EventWrite, RuntimeEvent } from '@factum/agent-facts';
import { describe, expect, it } from 'vitest';
import { AppendRefusedError, EventLog } from '../src/index.ts';
import { testStores } from '../src/testing.ts';
import { bounds, facts, invocation, settled, write } from './support/facts.ts';

// On PostgreSQL a batch's writes travel with its COMMIT, their values written out as
// literals (see runPipelined); these hold on both stores.
describe.each(testStores())('batch statements on $name', (stores) => {
  it('stores quotes, backslashes and dollar signs byte for byte, in events and results', async () => {
    await using store = await stores.create();
    const log = await EventLog.open(store.target);
    const at = invocation();
    const awkward = `it's a \\ back\\\\slash, $1 $$ E'x' \\' '' "quoted" \u00e9 \u{1f600} ;\ncommit; rollback`;
    await log.append(write(at, facts.opened(awkward)));
    await log.append(write(at, facts.completed('s1', [{ id: 'c1', input: { text: awkward } }])));
    await log.append(write(at, facts.dispatched('s1:c1', { kind: 'provider', stepId: 's1' })));
    const result = settled(at, 's1:c1', { text: awkward });
    await log.append(result);
    await log.close();

    const reopened = await EventLog.open(store.target);
    const [opened] = await reopened.read({ limit: 1 });
    expect(opened!.event.fact).toMatchObject({ input: { content: awkward } });
    expect((await reopened.resolveToolResult(at.sessionId, result.event.id)).json()).toEqual({
      text: awkward,
    });
    expect(await reopened.verifyChain()).toMatchObject({ ok: true, events: 4 });
    await reopened.close();
  });

  it('a second live log repeating an id the first stored is refused alone; its other write commits', async () => {
    await using store = await stores.create();
    const first = await EventLog.open(store.target);
    const second = await EventLog.open(store.target);
    const at = invocation();
    const opened = RuntimeEvent.create(at, facts.opened());
    await first.append(EventWrite.plain(opened));
    const other = invocation('-other', 'other');
    const again = RuntimeEvent.create(at, facts.completed('s1', []), { id: () => opened.id });
    const [theirs, repeated] = await Promise.allSettled(
      second.commitTogether([write(other, facts.opened()), EventWrite.plain(again)]),
    );
    expect(theirs?.status).toBe('fulfilled');
    expect(repeated).toMatchObject({ status: 'rejected', reason: { code: 'duplicate_event' } });
    await first.append(write(at, facts.completed('s2', [])));
    expect(await first.verifyChain()).toMatchObject({ ok: true, events: 3 });
    await second.close();
    await first.close();
  });

  it('a tool result too large to send as a literal is stored whole', async () => {
    await using store = await stores.create();
    const log = await EventLog.open(store.target);
    const at = invocation();
    const big = "x'\\".repeat(700_000);
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.dispatched('op', { kind: 'provider', stepId: 's1' })));
    const result = settled(at, 'op', { big });
    await log.append(result);
    expect((await log.resolveToolResult(at.sessionId, result.event.id)).json()).toEqual({ big });
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 3 });
    await log.close();
  });

  it('a repeated event id is refused alone as duplicate_event; the writes it was grouped with commit', async () => {
    await using store = await stores.create();
    const log = await EventLog.open(store.target);
    const at = invocation();
    const opened = RuntimeEvent.create(at, facts.opened());
    await log.append(EventWrite.plain(opened));
    const other = invocation('-other', 'other');
    // Accepted by the rules, caught by the event-id index: one batch with another session's write.
    const again = RuntimeEvent.create(at, facts.completed('s1', []), { id: () => opened.id });
    const [others, repeated] = await Promise.allSettled([
      log.append(write(other, facts.opened())),
      log.append(EventWrite.plain(again)),
    ]);
    expect(others.status, "another writer's fact is not failed by someone else's repeat").toBe('fulfilled');
    expect(repeated).toMatchObject({ status: 'rejected', reason: { code: 'duplicate_event' } });
    expect(AppendRefusedError.isInstance((repeated as PromiseRejectedResult).reason)).toBe(true);
    expect((await log.prefix(bounds)).highWater).toBe(2);
    // Alone in its batch, the same.
    const alone = RuntimeEvent.create(at, facts.completed('s9', []), { id: () => opened.id });
    await expect(log.append(EventWrite.plain(alone))).rejects.toMatchObject({ code: 'duplicate_event' });

    // Two writes of one group with the same new id: the first is stored, the second refused.
    const twin = RuntimeEvent.create(other, facts.completed('s2', []));
    const copy = RuntimeEvent.create(other, facts.completed('s3', []), { id: () => twin.id });
    const group = await Promise.allSettled(
      log.commitTogether([EventWrite.plain(twin), EventWrite.plain(copy)]),
    );
    expect(group.map((one) => one.status)).toEqual(['fulfilled', 'rejected']);
    expect(group[1]).toMatchObject({ reason: { code: 'duplicate_event' } });
    const stored = (await log.prefix(bounds)).events;
    expect(stored.map(({ event }) => event.id)).toEqual([opened.id, stored[1]!.event.id, twin.id]);
    expect(stored[2]!.event.fact).toMatchObject({ kind: 'model_completed', stepId: 's2' });
    // The log goes on, and both chains verify.
    await log.append(write(other, facts.ended()));
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 4 });
    await log.close();
  });
});
