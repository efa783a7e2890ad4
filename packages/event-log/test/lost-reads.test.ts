import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { EventLog, EventLogError } from '../src/index.ts';
import { FaultProxy, testStores } from '../src/testing.ts';
import { bounds, facts, invocation, settled, write } from './support/facts.ts';

const [, postgres] = testStores();
const provider = { kind: 'provider' as const, stepId: 's1' };

/** A PostgreSQL log reached through a fault proxy, with a few facts written. */
async function proxiedLog(transactionBoundMs?: number) {
  const store = await postgres!.create();
  const url = (store.target as { postgres: string }).postgres;
  const address = new URL(url);
  // The log is made and written with the default bound, straight to the server: a
  // short bound is for the reads under test, not for a migration on a loaded machine.
  const at = invocation('-a');
  const result = settled(at, 's1:c1', { answer: 42 });
  {
    await using direct = await EventLog.open({ postgres: url });
    await direct.append(write(at, facts.opened()));
    await direct.append(write(at, facts.completed('s1', [{ id: 'c1' }])));
    await direct.append(write(at, facts.dispatched('s1:c1', provider)));
    await direct.append(result);
  }
  const proxy = await FaultProxy.start({ host: address.hostname, port: Number(address.port) });
  const log = await EventLog.open({ postgres: proxy.rewrite(url) }, { transactionBoundMs });
  return {
    store,
    url,
    proxy,
    log,
    at,
    resultEventId: result.event.id,
    async [Symbol.asyncDispose]() {
      await log.close().catch(() => undefined);
      await proxy.close();
      await store[Symbol.asyncDispose]();
    },
  };
}

/** What a read failed with: its code when typed, else the raw error. */
async function failure(read: Promise<unknown>): Promise<unknown> {
  return read.then(
    () => 'resolved',
    (error: unknown) => (EventLogError.isInstance(error) ? error : { untyped: error }),
  );
}

describe('reads of a PostgreSQL log over a lost connection', () => {
  it('every public read cut mid-flight fails as store_unreachable, and succeeds once the network heals', async () => {
    await using setup = await proxiedLog();
    const { log, at, proxy, url, resultEventId } = setup;
    const reads: Record<string, () => Promise<unknown>> = {
      prefix: () => log.prefix(bounds),
      scopedPrefix: () => log.scopedPrefix({ session: at.sessionId }, bounds),
      sessionHead: () => log.sessionHead(at.sessionId),
      read: () => log.read({ afterSequence: 0 }),
      invocationEvents: () => log.invocationEvents(at, bounds),
      invocationRecovery: () => log.invocationRecovery(at, bounds),
      invocationOwnership: () => log.invocationOwnership(at),
      unfinishedOwnership: () => log.unfinishedOwnership(),
      unfinishedInvocations: () => log.unfinishedInvocations(),
      pendingApprovals: () => log.pendingApprovals(),
      expiredApprovals: () => log.expiredApprovals(),
      invocationApprovals: () => log.invocationApprovals(at),
      operationSessions: () => log.operationSessions('s1:c1'),
      resolveToolResult: () => log.resolveToolResult(at.sessionId, resultEventId),
      submission: () => log.submission(at.sessionId, 'key-1', bounds),
      runSource: () => log.runSource(at.sessionId, at.runId),
      verifyChain: () => log.verifyChain(),
      databaseNow: () => log.databaseNow(),
    };
    const password = new URL(url).password;
    for (const [name, read] of Object.entries(reads)) {
      const healthy = await read();
      proxy.stall();
      const pending = failure(read());
      // The statement (or the connection's opening) left the client: cut under it.
      while (proxy.held.up === 0) await sleep(5);
      proxy.cut();
      const error = await pending;
      expect(error, name).toBeInstanceOf(EventLogError);
      expect((error as EventLogError).code, name).toBe('store_unreachable');
      expect((error as EventLogError).cause, name).toBeDefined();
      if (password) expect((error as EventLogError).message, name).not.toContain(password);
      proxy.heal();
      const again = await read();
      // The clock moves; everything else reads the same as before the cut.
      if (name !== 'databaseNow') expect(again, name).toEqual(healthy);
    }
    const kinds = (await log.prefix(bounds)).events.map(({ event }) => event.fact.kind);
    expect(kinds).toEqual(['invocation_opened', 'model_completed', 'tool_dispatched', 'tool_settled']);
    expect((await log.verifyChain()).ok).toBe(true);
  });

  it('a store that answers slowly forever fails a read as store_unreachable after the bound; the pool heals and nothing written is lost', async () => {
    await using setup = await proxiedLog(200);
    const { log, at, proxy } = setup;
    const before = await log.scopedPrefix({ session: at.sessionId }, bounds);
    proxy.stall();
    const error = await failure(log.scopedPrefix({ session: at.sessionId }, bounds));
    expect(error).toBeInstanceOf(EventLogError);
    expect((error as EventLogError).code).toBe('store_unreachable');
    expect((error as EventLogError).message).toMatch(/no answer from PostgreSQL within 2000 ms/);
    // A read that needs a new connection while the network stays silent is bounded too.
    const opening = await failure(Promise.all([log.sessionHead(at.sessionId), log.verifyChain()]));
    expect((opening as EventLogError).code).toBe('store_unreachable');
    proxy.heal();
    const after = await log.scopedPrefix({ session: at.sessionId }, bounds);
    expect(after.highWater).toBe(before.highWater);
    expect(after.digest).toBe(before.digest);
    expect(after.events.map(({ event }) => event.id)).toEqual(before.events.map(({ event }) => event.id));
    // The pool heals for writes as well.
    await log.append(write(at, facts.ended()));
    expect((await log.sessionHead(at.sessionId)).highWater).toBe(before.highWater + 1);
  });

  it('a read whose session the server ends mid-statement fails as store_unreachable; the next read opens another', async () => {
    await using setup = await proxiedLog();
    const { log, at, url } = setup;
    const before = await log.scopedPrefix({ session: at.sessionId }, bounds);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      // The read waits on the server for a lock; an administrator ends its session then.
      await admin.query('begin; lock table events in access exclusive mode');
      const pending = failure(log.scopedPrefix({ session: at.sessionId }, bounds));
      let waiting: number[] = [];
      while (waiting.length === 0) {
        // Inside its transaction the client's view of the server's activity stays as it
        // was at its first look, unless cleared.
        await admin.query('select pg_stat_clear_snapshot()');
        const { rows } = await admin.query<{ pid: number }>(
          `select pid from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
        );
        waiting = rows.map((row) => row.pid);
      }
      for (const pid of waiting) await admin.query('select pg_terminate_backend($1)', [pid]);
      const error = await pending;
      expect(error).toBeInstanceOf(EventLogError);
      expect((error as EventLogError).code).toBe('store_unreachable');
      await admin.query('rollback');
    } finally {
      await admin.end();
    }
    const after = await log.scopedPrefix({ session: at.sessionId }, bounds);
    expect(after.digest).toBe(before.digest);
  });
});
