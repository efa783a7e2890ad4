import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../src/index.ts';
import { testStores } from '../src/testing.ts';
import { bounds, facts, invocation, settled, write } from './support/facts.ts';

const [, postgres] = testStores();

describe('a PostgreSQL log’s commits have a connection of their own', () => {
  it('commits while as many reads as the log has connections wait on the server, and the reads then finish', async () => {
    await using store = await postgres!.create();
    const url = (store.target as { postgres: string }).postgres;
    const size = 4;
    await using log = await EventLog.open({ postgres: url, pool: size });
    const at = invocation('-r', 'results');
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.dispatched('op', { kind: 'provider', stepId: 's1' })));
    const result = await log.append(settled(at, 'op', { answer: 42 }));
    await log.append(write(at, facts.ended()));
    const admin = new pg.Client({ connectionString: url });
    const watcher = new pg.Client({ connectionString: url });
    await admin.connect();
    await watcher.connect();
    try {
      // Reads of the results table wait on the server; a commit without results touches
      // nothing they wait for.
      await admin.query('begin; lock table tool_results in access exclusive mode');
      const reads = Array.from({ length: size }, () => log.resolveToolResult('results', result.event.id));
      // Counted outside the lock's transaction, whose view of the server's activity
      // would stay as it was at its first look.
      let waiting = 0;
      while (waiting < size - 1) {
        const { rows } = await watcher.query<{ waiting: number }>(
          `select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
        );
        waiting = rows[0]!.waiting;
      }
      // Every connection the reads may take is taken. Sharing them, this commit would
      // wait for the lock to go; with its own it commits now.
      const other = invocation('-w', 'writes');
      const opened = await log.commit(write(other, facts.opened()));
      const ended = await log.commit(write(other, facts.ended()));
      expect(ended.sequence).toBe(opened.sequence + 1);
      await admin.query('rollback');
      for (const read of await Promise.all(reads)) expect(read.json()).toEqual({ answer: 42 });
    } finally {
      await admin.end();
      await watcher.end();
    }
    const kinds = (await log.scopedPrefix({ session: 'writes' }, bounds)).events.map(
      ({ event }) => event.fact.kind,
    );
    expect(kinds).toEqual(['invocation_opened', 'invocation_ended']);
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 6 });
  });

  it('with a pool of one connection, reads and commits share it', async () => {
    await using store = await postgres!.create();
    const url = (store.target as { postgres: string }).postgres;
    await using log = await EventLog.open({ postgres: url, pool: 1 });
    const at = invocation('-1', 'one');
    await log.commit(write(at, facts.opened()));
    await log.commit(write(at, facts.ended()));
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ connections: number }>(
        `select count(*)::int as connections from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
      );
      expect(rows[0]!.connections).toBe(1);
    } finally {
      await admin.end();
    }
    expect((await log.scopedPrefix({ session: 'one' }, bounds)).events).toHaveLength(2);
  });
});
