import type { CommitReceipt, Invocation } from '@factum/agent-facts';
import { beforeAll, describe, expect, it } from 'vitest';
import { AppendRefusedError, EMPTY_DIGEST, EventLog } from '../src/index.ts';
import { testStores } from '../src/testing.ts';
import { bundleChild, startChild } from './support/child-bundle.ts';
import { bounds, facts, invocation, write } from './support/facts.ts';

let child = '';
beforeAll(async () => {
  child = await bundleChild(new URL('./support/fresh-child.ts', import.meta.url), 'fresh-child');
}, 60_000);

/** A child that opens a run in `sessionId` when told to; its last line says how it went. */
function startFresh(target: string, sessionId: string, name: string) {
  const run = startChild(child, [target, sessionId, name]);
  return { ...run, done: run.done.then(({ output }) => output.trim().split('\n').at(-1) ?? '') };
}

const empty = { highWater: 0, digest: EMPTY_DIGEST };

/** A run's first commit: its opening and a model step, built on the session's empty history. */
const openingGroup = (at: Invocation) => [
  write(at, facts.opened()),
  write(at, { kind: 'model_observed', stepId: 's', observation: { kind: 'text_delta', text: 'hi' } }),
  write(at, facts.completed('s', [])),
];

/** Two commits of this log's own, so that its cache knows the chain's head and goes one message. */
async function warm(log: EventLog): Promise<void> {
  const at = invocation('-warm', 'warm');
  await log.commit(write(at, facts.opened()));
  await log.commit(write(at, facts.ended()));
}

describe.each(testStores())('a new session’s first group ($name)', (stores) => {
  const onePostgresMessage = stores.name === 'postgres';

  it('commits built on the empty history, several sessions at once; on PostgreSQL each commit is one message, with no read of the sessions', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    await warm(log);
    const before = log.stats();
    // Quotes, dollar signs, a backslash, the guard's own quote tag and a would-be
    // statement: the store's check gets them intact.
    const sessions = ['new-1', "it's", '$$; drop table events; --', 'sé$ssion\\', 'a$fresh$b'];
    const groups = sessions.map((sessionId) =>
      Promise.all(log.commitTogether(openingGroup(invocation('-1', sessionId)), { onHead: empty })),
    );
    const receipts = await Promise.all(groups);
    const after = log.stats();
    if (onePostgresMessage) expect(after.oneTrip - before.oneTrip).toBe(after.commits - before.commits);
    for (const [index, sessionId] of sessions.entries()) {
      const { events } = await log.scopedPrefix({ session: sessionId }, bounds);
      expect(events.map(({ event }) => event.fact.kind)).toEqual([
        'invocation_opened',
        'model_observed',
        'model_completed',
      ]);
      expect(events.map(({ sequence }) => sequence)).toEqual(
        receipts[index]!.map((r: CommitReceipt) => r.sequence),
      );
    }
    // Each new session's next turn is judged on the state its first group left.
    const second = invocation('-2', 'new-1');
    await expect(log.commit(write(second, facts.opened()))).rejects.toMatchObject({ code: 'session_busy' });
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 2 + 3 * sessions.length });
  });

  it('two live processes open a run in one new session at the same moment: one commits, the other is refused whole with nothing written', async () => {
    await using store = await stores.create();
    const target = typeof store.target === 'string' ? store.target : store.target.postgres;
    await using log = await EventLog.open(store.target);
    const children = [startFresh(target, 'raced', 'a'), startFresh(target, 'raced', 'b')];
    await Promise.all(children.map((one) => one.ready));
    for (const one of children) one.process.stdin.write('go\n');
    const outcomes = (await Promise.all(children.map((one) => one.done))).sort();
    expect(outcomes).toEqual(['committed', 'refused session_moved']);
    const { events } = await log.scopedPrefix({ session: 'raced' }, bounds);
    expect(events.map(({ event }) => event.fact.kind)).toEqual(['invocation_opened', 'model_observed']);
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 6 });
  });

  it.each(['taken', "taken's $fresh$ \\ $$", 'taken $1 $2'])(
    'does not take for new a session another process wrote before this log’s last commit (%s): the group is refused whole, nothing written',
    async (taken) => {
      await using store = await stores.create();
      await using log = await EventLog.open(store.target);
      await using other = await EventLog.open(store.target);
      // Another process ran a turn on the session before this log's cache learned the
      // chain's head; no live run is left there for a table's key to catch.
      await other.commit(write(invocation('-other', taken), facts.opened()));
      await other.commit(write(invocation('-other', taken), facts.ended()));
      await warm(log);
      const before = log.stats();
      const headBefore = await log.sessionHead(taken);
      expect(headBefore.highWater).toBe(2);
      const commits = log.commitTogether(openingGroup(invocation('-1', taken)), { onHead: empty });
      for (const result of await Promise.allSettled(commits)) {
        expect(result.status).toBe('rejected');
        const reason = (result as PromiseRejectedResult).reason;
        expect(AppendRefusedError.isInstance(reason) && reason.code).toBe('session_moved');
      }
      expect(await log.sessionHead(taken)).toEqual(headBefore);
      if (onePostgresMessage) expect(log.stats().oneTrip).toBe(before.oneTrip);
      // The same invocation opens on the head it reads.
      const seen = await log.sessionHead(taken);
      const opened = await Promise.all(
        log.commitTogether(openingGroup(invocation('-1', taken)), { onHead: seen }),
      );
      expect(opened.map((receipt) => receipt.sequence)).toEqual([5, 6, 7]);
      expect(await log.verifyChain()).toMatchObject({ ok: true, events: 7 });
    },
  );
});
