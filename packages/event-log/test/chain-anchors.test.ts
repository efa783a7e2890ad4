import { canonicalJson, chainLink, contentDigest } from '@factum/agent-facts';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { type ChainAnchor, EventLog, EventLogError } from '../src/index.ts';
import { type TestStore, testStores, withClient } from '../src/testing.ts';
import { bounds, facts, invocation, write } from './support/facts.ts';

type Row = { sequence: number; session_id: string; body: string };

/** The stored rows, read around the log (as someone with the database file would). */
async function rowsOf(store: TestStore): Promise<Row[]> {
  const sql = 'select sequence, session_id, body from events order by sequence';
  if (typeof store.target === 'string') {
    const database = new Database(store.target, { readonly: true });
    try {
      return (database.prepare(sql).all() as Row[]).map((row) => ({
        ...row,
        sequence: Number(row.sequence),
      }));
    } finally {
      database.close();
    }
  }
  const { rows } = await withClient(store.target.postgres, (client) => client.query<Row>(sql));
  return rows.map((row) => ({ ...row, sequence: Number(row.sequence) }));
}

/**
 * Rewrites one event's body and recomputes both chains over every row from it on, as
 * someone who can write the database but not reach an anchor kept elsewhere would: the
 * chains alone then check out.
 */
async function rewriteHistory(
  store: TestStore,
  sequence: number,
  change: (event: Record<string, unknown>) => void,
) {
  const rows = await rowsOf(store);
  let previous: string | undefined;
  const sessions = new Map<string, string>();
  const updates: string[] = [];
  for (const row of rows) {
    let body = row.body;
    if (row.sequence === sequence) {
      const event = JSON.parse(body) as Record<string, unknown>;
      change(event);
      body = canonicalJson(event);
    }
    const content = contentDigest(body);
    previous = chainLink(previous, content);
    const session = chainLink(sessions.get(row.session_id), content);
    sessions.set(row.session_id, session);
    if (row.sequence >= sequence) {
      const quoted = body.replaceAll("'", "''");
      updates.push(
        `update events set body = '${quoted}', digest = '${previous}', session_digest = '${session}' where sequence = ${row.sequence};`,
      );
    }
  }
  for (const update of updates) await store.raw(update);
}

const otherDigest = contentDigest('not this log');

describe.each(testStores())('anchors of the chain ($name)', (stores) => {
  async function logWithEvents(store: TestStore, count: number): Promise<EventLog> {
    const log = await EventLog.open(store.target);
    for (let index = 0; index < count; index += 1) {
      const at = invocation(`-${index}`);
      await log.append(write(at, facts.opened()));
      await log.append(write(at, facts.ended()));
    }
    return log;
  }

  it('reports the last checked event as the head, the prefix digest at that sequence, and an anchor taken from it keeps verifying as the log grows', async () => {
    await using store = await stores.create();
    await using log = await logWithEvents(store, 2);
    const first = await log.verifyChain();
    const prefix = await log.prefix(bounds);
    expect(first).toEqual({ ok: true, events: 4, head: { sequence: 4, digest: prefix.digest } });
    const at = invocation('-later');
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.ended()));
    const anchor = first.head!;
    const later = await log.verifyChain({ anchors: [anchor] });
    expect(later).toEqual({
      ok: true,
      events: 6,
      head: { sequence: 6, digest: (await log.prefix(bounds)).digest },
    });
  });

  it('an empty log verifies with no head, and cannot pass an anchor', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    expect(await log.verifyChain()).toEqual({ ok: true, events: 0, head: undefined });
    expect(await log.verifyChain({ anchors: [{ sequence: 1, digest: otherDigest }] })).toEqual({
      ok: false,
      events: 0,
      head: undefined,
      brokenAt: 1,
      reason: 'the log ends at sequence 0, before the anchor at 1: events were removed',
    });
  });

  it('breaks at an anchor whose digest the chain does not pass through, with the events before it checked', async () => {
    await using store = await stores.create();
    await using log = await logWithEvents(store, 2);
    const { head } = await log.verifyChain({ anchors: [] });
    const report = await log.verifyChain({ anchors: [{ sequence: 2, digest: head!.digest }] });
    expect(report).toMatchObject({ ok: false, events: 1, brokenAt: 2 });
    expect(report.head?.sequence).toBe(1);
    if (!report.ok) expect(report.reason).toBe(`the chain at sequence 2 is not the anchored ${head!.digest}`);
  });

  it('catches a log cut short of an anchor, which the chains alone cannot', async () => {
    await using store = await stores.create();
    await using log = await logWithEvents(store, 3);
    const { head } = await log.verifyChain();
    await store.raw('delete from events where sequence > 4');
    // Every remaining link is sound: only the anchor knows more was there.
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 4, head: { sequence: 4 } });
    expect(await log.verifyChain({ anchors: [head!] })).toMatchObject({
      ok: false,
      events: 4,
      brokenAt: 6,
      reason: 'the log ends at sequence 4, before the anchor at 6: events were removed',
    });
  });

  it('catches a rewritten history whose chains were recomputed, at the first anchor past the change', async () => {
    await using store = await stores.create();
    await using log = await logWithEvents(store, 1);
    const before: ChainAnchor = (await log.verifyChain()).head!;
    for (const suffix of ['-b', '-c']) {
      const at = invocation(suffix);
      await log.append(write(at, facts.opened()));
      await log.append(write(at, facts.ended()));
    }
    const after: ChainAnchor = (await log.verifyChain()).head!;
    expect([before.sequence, after.sequence]).toEqual([2, 6]);
    await rewriteHistory(store, 3, (event) => {
      event.timestamp = '2020-01-01T00:00:00.000Z';
    });
    await using reopened = await EventLog.open(store.target);
    // The rewrite parses and its chains were recomputed: without an anchor it passes.
    expect(await reopened.verifyChain()).toMatchObject({ ok: true, events: 6 });
    // An anchor before the change still holds; one after it does not.
    expect(await reopened.verifyChain({ anchors: [before] })).toMatchObject({ ok: true, events: 6 });
    expect(await reopened.verifyChain({ anchors: [before, after] })).toMatchObject({
      ok: false,
      events: 5,
      brokenAt: 6,
    });
  });

  it('refuses anchors that could never match, before reading anything', async () => {
    await using store = await stores.create();
    await using log = await logWithEvents(store, 1);
    const refusals: ChainAnchor[][] = [
      [{ sequence: 0, digest: otherDigest }],
      [{ sequence: 1.5, digest: otherDigest }],
      [{ sequence: 1, digest: 'sha256:abc' }],
      [{ sequence: 1, digest: otherDigest.toUpperCase() }],
      [
        { sequence: 1, digest: otherDigest },
        { sequence: 1, digest: contentDigest('another') },
      ],
    ];
    for (const anchors of refusals) {
      const error = await log.verifyChain({ anchors }).catch((caught: unknown) => caught);
      expect(EventLogError.isInstance(error), String(error)).toBe(true);
      expect(error).toMatchObject({ code: 'invalid_option' });
    }
  });
});
