import { EventWrite, type Fact, RuntimeEvent } from '@factum/agent-facts';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../src/index.ts';
import { testStores } from '../src/testing.ts';
import { bounds, facts, invocation } from './support/facts.ts';

const factories = testStores();

describe.skipIf(factories.length < 2)('SQLite and PostgreSQL', () => {
  it('give identical digests and high waters for the same facts', async () => {
    const at = invocation();
    const written: Fact[] = [
      facts.opened('same everywhere'),
      facts.completed('s', [{ id: 'c', input: { n: 1.5, text: 'é', list: [true, null] } }]),
      facts.dispatched('s:c', { kind: 'provider', stepId: 's' }),
      facts.failed('s:c'),
      facts.ended(),
    ];
    const digests: string[] = [];
    for (const factory of factories) {
      await using store = await factory.create();
      const log = await EventLog.open(store.target);
      let n = 0;
      for (const fact of written) {
        n += 1;
        const event = RuntimeEvent.create(at, fact, {
          id: () => `event-${n}`,
          now: () => new Date(1_700_000_000_000 + n),
        });
        await log.append(EventWrite.plain(event));
      }
      const global = await log.prefix(bounds);
      const session = await log.scopedPrefix({ session: at.sessionId }, bounds);
      expect(global.highWater).toBe(5);
      digests.push(`${global.digest} ${session.digest}`);
      await log.close();
    }
    expect(digests[0]).toBe(digests[1]);
  });
});

describe('PostgreSQL connections the server ends', () => {
  const postgres = factories.find((factory) => factory.name === 'postgres')!;

  it('an idle connection terminated by the server neither crashes the process nor loses the next append', async () => {
    await using store = await postgres.create();
    const log = await EventLog.open(store.target);
    const at = invocation();
    await log.append(EventWrite.plain(RuntimeEvent.create(at, facts.opened('before'))));
    // Another session ends every idle connection of this database, as a restart would.
    await store.raw(
      `select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
    );
    // The pool hears of it only when the server's message arrives: give it a moment.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await log.append(EventWrite.plain(RuntimeEvent.create(at, facts.ended())));
    const kinds = (await log.prefix(bounds)).events.map((stored) => stored.event.fact.kind);
    expect(kinds).toEqual(['invocation_opened', 'invocation_ended']);
    await log.close();
  });
});
