import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { EventLog, EventLogError } from '../src/index.ts';
import type { LogDatabase } from '../src/log-schema.ts';
import { SessionReads } from '../src/session-reads.ts';
import { testStores } from '../src/testing.ts';
import { bounds, facts, invocation, write } from './support/facts.ts';

/** Session ids a caller might pass, hostile ones among them: all are bound parameters. */
const ids = [
  'plain',
  "o'brien",
  'taken $1 $2',
  '$$; drop table events; --',
  'back\\slash',
  'ünï-códe ✓',
  'NULL',
  '{a,"b"}',
  'empty-1',
  'empty-2',
];

/** Writes `n` runs (two facts each) into every id except the empty ones. */
async function fill(log: EventLog, runs: number): Promise<void> {
  for (const sessionId of ids.filter((id) => !id.startsWith('empty'))) {
    for (let run = 0; run < runs; run += 1) {
      const at = invocation(`-${run}`, sessionId);
      await log.commitTogether([write(at, facts.opened(`${sessionId} ${run}`)), write(at, facts.ended())])[1];
    }
  }
}

const shape = (prefix: Awaited<ReturnType<EventLog['scopedPrefix']>>) => ({
  highWater: prefix.highWater,
  digest: prefix.digest,
  events: prefix.events.map(({ sequence, event }) => ({
    sequence,
    id: event.id,
    session: event.invocation.sessionId,
  })),
});

describe.each(testStores())('sessions read at once on $name', (stores) => {
  it('each gets its own whole history, as read alone: ids with quotes and placeholders included', async () => {
    await using store = await stores.create();
    const log = await EventLog.open(
      store.name === 'postgres'
        ? { postgres: (store.target as { postgres: string }).postgres, pool: 2 }
        : store.target,
    );
    await fill(log, 3);
    const together = await Promise.all(
      [...ids, ...ids].map((id) => log.scopedPrefix({ session: id }, bounds)),
    );
    const alone = [];
    for (const id of ids) alone.push(shape(await log.scopedPrefix({ session: id }, bounds)));
    expect(together.map(shape)).toEqual([...alone, ...alone]);
    expect(alone[0]!.events).toHaveLength(6);
    expect(alone[0]!.events.every((event) => event.session === 'plain')).toBe(true);
    expect(alone.at(-1)!.events).toEqual([]);
    await log.close();
  });

  it('each caller is held to its own bounds in one burst: one over them fails, the others read', async () => {
    await using store = await stores.create();
    const log = await EventLog.open(store.target);
    await fill(log, 2);
    const reads = await Promise.allSettled([
      log.scopedPrefix({ session: 'plain' }, { maxEvents: 3, maxBytes: bounds.maxBytes }),
      log.scopedPrefix({ session: 'plain' }, bounds),
      log.scopedPrefix({ session: "o'brien" }, { maxEvents: 4, maxBytes: bounds.maxBytes }),
      log.scopedPrefix({ session: 'back\\slash' }, { maxEvents: 10, maxBytes: 100 }),
      log.scopedPrefix({ session: 'empty-1' }, { maxEvents: 0, maxBytes: 0 }),
    ]);
    const codes = reads.map((read) =>
      read.status === 'fulfilled'
        ? read.value.events.length
        : EventLogError.isInstance(read.reason)
          ? read.reason.code
          : String(read.reason),
    );
    expect(codes).toEqual(['bounds_exceeded', 4, 4, 'bounds_exceeded', 0]);
    await log.close();
  });

  it('a row that no longer parses fails the read of its session only', async () => {
    await using store = await stores.create();
    const log = await EventLog.open(store.target);
    await fill(log, 1);
    await store.raw(`update events set body = '{"broken"' where session_id = 'plain'`);
    const reads = await Promise.allSettled(ids.map((id) => log.scopedPrefix({ session: id }, bounds)));
    expect(reads[0]).toMatchObject({ status: 'rejected', reason: { code: 'corrupt_row' } });
    expect(reads.slice(1).map((read) => read.status)).toEqual(ids.slice(1).map(() => 'fulfilled'));
    await log.close();
  });
});

describe('SessionReads on PostgreSQL', () => {
  const [, postgres] = testStores();

  /**
   * A PostgreSQL store whose sessions hold `runs` runs each, and a handle on it with one
   * connection that records the statements it runs.
   */
  async function filledStore(runs: number) {
    const store = await postgres!.create();
    const log = await EventLog.open(store.target);
    await fill(log, runs);
    await log.close();
    const statements: string[] = [];
    const url = (store.target as { postgres: string }).postgres;
    const db = new Kysely<LogDatabase>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }),
      log: (event) => {
        if (event.level === 'query') statements.push(event.query.sql);
      },
    });
    return {
      store,
      statements,
      reads: new SessionReads(db, 1),
      async [Symbol.asyncDispose]() {
        await db.destroy();
        await store[Symbol.asyncDispose]();
      },
    };
  }

  it('reads alone while a reader is free, and every read that waited in one statement after it', async () => {
    await using filled = await filledStore(2);
    const { reads, statements } = filled;
    const burst = await Promise.all(ids.map((id) => reads.read(id, bounds)));
    expect(statements).toHaveLength(2);
    expect(statements[1]).toContain('unnest');
    expect(burst.map((read) => read.events.length)).toEqual([4, 4, 4, 4, 4, 4, 4, 4, 0, 0]);
    for (const [index, read] of burst.entries()) {
      expect(read.events.every(({ event }) => event.invocation.sessionId === ids[index])).toBe(true);
      const sequences = read.events.map(({ sequence }) => sequence);
      expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    }
    statements.length = 0;
    await reads.read('plain', bounds);
    expect(statements).toHaveLength(1);
    expect(statements[0]).not.toContain('unnest');
  });

  it('a statement that fails rejects every read it carried, and the next burst reads again', async () => {
    await using filled = await filledStore(1);
    const { reads, store } = filled;
    await store.raw('alter table events rename to events_away');
    const failed = await Promise.allSettled(ids.map((id) => reads.read(id, bounds)));
    expect(failed.map((read) => read.status)).toEqual(ids.map(() => 'rejected'));
    await store.raw('alter table events_away rename to events');
    const again = await Promise.all(ids.map((id) => reads.read(id, bounds)));
    expect(again.map((read) => read.events.length)).toEqual([2, 2, 2, 2, 2, 2, 2, 2, 0, 0]);
  });
});
