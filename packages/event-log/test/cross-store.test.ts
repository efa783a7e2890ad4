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
