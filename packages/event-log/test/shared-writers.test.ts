import { EventWrite, RuntimeEvent } from '@factum/agent-facts';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../src/index.ts';
import { REFRESH_WINDOW } from '../src/log-dialect.ts';
import { testStores } from '../src/testing.ts';
import { bounds, facts, invocation, write } from './support/facts.ts';

const provider = { kind: 'provider' as const, stepId: 's1' };

// Each log keeps the rules' state between its batches; what another log (another
// process) commits in between must reach its rules all the same.
describe.each(testStores())('two logs on one $name store', (stores) => {
  it("each log's rules see the other's commits between its batches", async () => {
    await using store = await stores.create();
    const a = await EventLog.open(store.target);
    const b = await EventLog.open(store.target);
    const shared = invocation('-shared', 'shared');
    const quiet = invocation('-quiet', 'quiet');
    await a.append(write(shared, facts.opened()));
    // b caches both sessions: `shared` (written by a too) and `quiet` (its own).
    await b.append(write(shared, facts.completed('s1', [{ id: 'c1' }])));
    await b.append(write(quiet, facts.opened()));

    await a.append(write(shared, facts.dispatched('s1:c1', provider)));
    await expect(b.append(write(shared, facts.dispatched('s1:c1', provider)))).rejects.toMatchObject({
      code: 'duplicate_dispatch',
      outcome: 'rejected',
    });
    await b.append(write(shared, facts.failed('s1:c1')));
    await expect(a.append(write(shared, facts.failed('s1:c1')))).rejects.toMatchObject({
      code: 'operation_closed',
    });
    await a.append(write(shared, facts.ended()));
    await expect(b.append(write(shared, facts.completed('s2', [])))).rejects.toMatchObject({
      code: 'sealed_invocation',
    });

    // b's own session stays b's to write; once a opens its next run, b sees it busy.
    await b.append(write(quiet, facts.ended()));
    const next = invocation('-next', 'quiet');
    await a.append(write(next, facts.opened()));
    await expect(b.append(write(invocation('-late', 'quiet'), facts.opened()))).rejects.toMatchObject({
      code: 'session_busy',
    });
    await b.append(write(next, facts.completed('s1', [])));

    for (const log of [a, b]) expect(await log.verifyChain()).toMatchObject({ ok: true, events: 9 });
    const fromA = await a.scopedPrefix({ session: 'quiet' }, bounds);
    const fromB = await b.scopedPrefix({ session: 'quiet' }, bounds);
    expect(fromB.digest).toBe(fromA.digest);
    await a.close();
    await b.close();
  });

  it('a log that fell further behind than the refresh looks starts its rules over', async () => {
    await using store = await stores.create();
    const a = await EventLog.open(store.target);
    const b = await EventLog.open(store.target);
    const at = invocation('-far', 'far');
    await a.append(write(at, facts.opened()));
    await b.append(write(at, facts.completed('s1', [{ id: 'c1' }])));
    // More events than the refresh reads through, then the write b must not miss.
    const noise = invocation('-noise', 'noise');
    await a.append(write(noise, facts.opened()));
    await Promise.all(
      Array.from({ length: REFRESH_WINDOW }, (_, n) =>
        a.append(
          EventWrite.plain(
            RuntimeEvent.create(noise, {
              kind: 'model_observed',
              stepId: 's1',
              observation: { kind: 'text_delta', text: `${n}` },
            }),
          ),
        ),
      ),
    );
    await a.append(write(at, facts.dispatched('s1:c1', provider)));
    await expect(b.append(write(at, facts.dispatched('s1:c1', provider)))).rejects.toMatchObject({
      code: 'duplicate_dispatch',
    });
    await b.append(write(at, facts.failed('s1:c1')));
    expect(await b.verifyChain()).toMatchObject({ ok: true });
    await a.close();
    await b.close();
  }, 120_000);
});
