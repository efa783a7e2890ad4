import type { CommitReceipt, Invocation } from '@factum/agent-facts';
import { describe, expect, it } from 'vitest';
import { AppendRefusedError, EMPTY_DIGEST, EventLog, type SessionHead } from '../src/index.ts';
import { testStores } from '../src/testing.ts';
import { bounds, facts, invocation, write } from './support/facts.ts';

/** A run's first commit: its opening and a model step, built on what was seen of the session. */
const openingGroup = (at: Invocation) => [
  write(at, facts.opened()),
  write(at, { kind: 'model_observed', stepId: 's', observation: { kind: 'text_delta', text: 'hi' } }),
  write(at, facts.completed('s', [])),
];

const headOf = (receipt: CommitReceipt): SessionHead => ({
  highWater: receipt.sequence,
  digest: receipt.sessionDigest!,
});

/** Every write of the group refused `session_moved`, and the log unchanged by it. */
async function expectRefusedWhole(log: EventLog, commits: Promise<CommitReceipt>[], sessionId: string) {
  // Held at once: the refusals may come back before the head's read does.
  const results = Promise.allSettled(commits);
  const before = await log.sessionHead(sessionId);
  for (const result of await results) {
    expect(result.status).toBe('rejected');
    const reason = (result as PromiseRejectedResult).reason;
    expect(AppendRefusedError.isInstance(reason) && reason.code).toBe('session_moved');
  }
  expect(await log.sessionHead(sessionId)).toEqual(before);
}

describe.each(testStores())('a group built on a session head ($name)', (stores) => {
  it('commits on an unmoved head, from an empty session on, and the log remembers where its last commit left the session', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    const first = invocation('-1');
    expect(log.committedHead('session')).toBeUndefined();
    const empty = { highWater: 0, digest: EMPTY_DIGEST };
    expect(await log.sessionHead('session')).toEqual(empty);
    const opened = await Promise.all(log.commitTogether(openingGroup(first), { onHead: empty }));
    expect(log.committedHead('session')).toEqual(headOf(opened.at(-1)!));
    expect(await log.sessionHead('session')).toEqual(headOf(opened.at(-1)!));
    const ended = await log.commit(write(first, facts.ended()));
    const second = invocation('-2');
    const receipts = await Promise.all(log.commitTogether(openingGroup(second), { onHead: headOf(ended) }));
    expect(receipts.map((receipt) => receipt.sequence)).toEqual([5, 6, 7]);
    expect(log.committedHead('session')).toEqual(headOf(receipts.at(-1)!));
    expect(log.committedHead('elsewhere')).toBeUndefined();
    expect(await log.verifyChain()).toMatchObject({ ok: true });
  });

  it('refuses the whole group, writing nothing, when another process appended to the session; the same invocation opens on the new head', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    await using other = await EventLog.open(store.target);
    const first = invocation('-1');
    // This log's cache and its one-message path are warm: its last commits were its own.
    await Promise.all(log.commitTogether(openingGroup(first)));
    const seen = headOf(await log.commit(write(first, facts.ended())));
    await log.commit(write(invocation('-x', 'warm'), facts.opened()));
    // Another process's run on the session, which this log has not seen.
    const foreign = invocation('-foreign');
    await Promise.all(other.commitTogether(openingGroup(foreign)));
    await other.commit(write(foreign, facts.ended()));
    const second = invocation('-2');
    await expectRefusedWhole(log, log.commitTogether(openingGroup(second), { onHead: seen }), 'session');
    expect(log.committedHead('session'), 'a failed group forgets nothing it did not write').toEqual(seen);
    expect(await log.invocationEvents(second, bounds)).toEqual([]);
    const now = await log.sessionHead('session');
    const receipts = await Promise.all(log.commitTogether(openingGroup(second), { onHead: now }));
    expect(receipts[0]!.sequence).toBe(now.highWater + 1);
    expect(await log.verifyChain()).toMatchObject({ ok: true });
  });

  it('judges the head before the group’s own writes, and a write of this log to the session in between moves it too', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    const first = invocation('-1');
    const opened = await Promise.all(log.commitTogether(openingGroup(first)));
    const seen = headOf(opened.at(-1)!);
    const ended = await log.commit(write(first, facts.ended()));
    expect(log.committedHead('session')).toEqual(headOf(ended));
    await expectRefusedWhole(
      log,
      log.commitTogether(openingGroup(invocation('-2')), { onHead: seen }),
      'session',
    );
    // Two groups in one batch: the first moves the session, so the second, built on the
    // same head, is refused; writes of other sessions in the batch go on.
    const [a, b] = [invocation('-a'), invocation('-b')];
    const lone = log.commit(write(invocation('-c', 'other'), facts.opened()));
    const groupA = log.commitTogether(openingGroup(a), { onHead: headOf(ended) });
    const groupB = log.commitTogether(openingGroup(b), { onHead: headOf(ended) });
    // Judged below, once `a` has committed.
    for (const commit of groupB) commit.catch(() => undefined);
    const receiptsA = await Promise.all(groupA);
    expect(receiptsA[0]!.sequence).toBeGreaterThan(ended.sequence);
    // `a` is live now, so `b` would be busy too: the head is judged first.
    await expectRefusedWhole(log, groupB, 'session');
    await lone;
    expect(await log.verifyChain()).toMatchObject({ ok: true });
  });
});

describe('a group built on a session head, committed by the writer thread (sqlite)', () => {
  it('keeps the condition across the crossing: each group judged once, before its first write', async () => {
    const [sqlite] = testStores().filter((stores) => stores.name === 'sqlite');
    await using store = await sqlite!.create();
    // Every batch goes to the writer thread.
    await using log = await EventLog.open(store.target, { loneCommitBudgetMs: 0 });
    await log.startWriterThread();
    const sessions = Array.from({ length: 8 }, (_, index) => `s${index}`);
    const heads = await Promise.all(
      sessions.map(async (sessionId) => {
        const at = invocation('-1', sessionId);
        await Promise.all(log.commitTogether(openingGroup(at)));
        return headOf(await log.commit(write(at, facts.ended())));
      }),
    );
    // Even sessions: built on the head; odd ones: on a head one event too early.
    const groups = sessions.map((sessionId, index) =>
      log.commitTogether(openingGroup(invocation('-2', sessionId)), {
        onHead:
          index % 2 === 0 ? heads[index]! : { ...heads[index]!, highWater: heads[index]!.highWater - 1 },
      }),
    );
    // Every outcome held now: a later group may be refused while an earlier one is awaited.
    for (const group of groups) for (const commit of group) commit.catch(() => undefined);
    for (const [index, group] of groups.entries()) {
      if (index % 2 === 0) expect(await Promise.all(group)).toHaveLength(3);
      else await expectRefusedWhole(log, group, sessions[index]!);
    }
    expect(log.stats().commits).toBeGreaterThan(0);
    expect(await log.verifyChain()).toMatchObject({ ok: true });
  });
});
