import type { RuntimeEvent } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog, type LogTarget } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { ToolCatalog } from '@factum/tools';
import { describe, expect, it } from 'vitest';
import { Engine } from '../src/index.ts';
import { SessionProjection } from '../src/session-projection.ts';
import { configuration, done } from './support/agent-loop.ts';
import { countingReads, ended, factWrite, invocationAt, opened } from './support/session-writes.ts';

const wide = { maxEvents: 10_000, maxBytes: 16 * 1024 * 1024 };
/** This process's log (reads counted) and another writer's, on one store. */
async function twoWriters(target: LogTarget) {
  const own = await EventLog.open(target);
  const other = await EventLog.open(target);
  let next = 1;
  return {
    ...countingReads(own),
    own,
    /** Another process's whole turn in `session`. */
    async foreignTurn(session = 'shared') {
      const n = next++;
      await other.append(factWrite(session, n, opened));
      await other.append(factWrite(session, n, ended));
    },
    /** A turn of this process, advancing `projection` by its commits. */
    async ownTurn(projection: SessionProjection, session = 'shared') {
      const n = next++;
      for (const fact of [opened, ended]) {
        const one = factWrite(session, n, fact);
        const receipt = await own.commit(one);
        projection.advance(receipt.sequence, one, receipt.sessionDigest);
      }
    },
    [Symbol.asyncDispose]: async () => {
      await other.close();
      await own.close();
    },
  };
}

const ids = (events: readonly { event: RuntimeEvent }[]) => events.map(({ event }) => event.id);

/**
 * A history in memory that another writer's facts moved past takes only those facts when
 * it is still a prefix of the session — chained as the log chains them, up to the head's
 * digest — and is read whole otherwise. Either way a view equals `scopedPrefix`.
 */
describe.each(testStores())('a history in memory catches up with another writer, on $name', (stores) => {
  it('another process’s turns are read alone, and the view equals the log’s read of the session', async () => {
    await using store = await stores.create();
    await using logs = await twoWriters(store.target);
    const projection = new SessionProjection('shared');
    await logs.foreignTurn();
    await projection.view(logs.log, wide);
    expect(logs.wholeReads(), 'the first view reads the session').toBe(1);
    await logs.ownTurn(projection);
    await logs.foreignTurn();
    await logs.foreignTurn();
    const view = await projection.view(logs.log, wide);
    expect(logs.wholeReads(), 'then only what came after it').toBe(1);
    const read = await logs.own.scopedPrefix({ session: 'shared' }, wide);
    expect(ids(view.events)).toEqual(ids(read.events));
    expect(view.events).toEqual(read.events);
    expect({ highWater: view.highWater, digest: view.digest }).toEqual({
      highWater: read.highWater,
      digest: read.digest,
    });
  });

  it('a history that missed a fact — this process’s commit landed after another writer’s — is read whole', async () => {
    await using store = await stores.create();
    await using logs = await twoWriters(store.target);
    const projection = new SessionProjection('shared');
    await logs.ownTurn(projection);
    await projection.view(logs.log, wide);
    // The other writer's turn lands first; this process's next commits advance the
    // history past it, so the history's chain is not the log's.
    await logs.foreignTurn();
    await logs.ownTurn(projection);
    await logs.foreignTurn();
    const reads = logs.wholeReads();
    const view = await projection.view(logs.log, wide);
    expect(logs.wholeReads() - reads, 'the chain did not reach the head: read whole').toBe(1);
    const read = await logs.own.scopedPrefix({ session: 'shared' }, wide);
    expect(view.events).toEqual(read.events);
    expect(view.digest).toBe(read.digest);
  });

  it('what came after would pass the bounds: the view fails `bounds_exceeded`, as the log’s read does', async () => {
    await using store = await stores.create();
    await using logs = await twoWriters(store.target);
    const projection = new SessionProjection('shared');
    await logs.foreignTurn();
    await projection.view(logs.log, { maxEvents: 3, maxBytes: 1 << 20 });
    await logs.foreignTurn();
    await expect(projection.view(logs.log, { maxEvents: 3, maxBytes: 1 << 20 })).rejects.toMatchObject({
      code: 'bounds_exceeded',
    });
    expect((await projection.view(logs.log, wide)).events).toHaveLength(4);
  });

  it('a fork’s history keeps what it inherits and takes its own new facts alone', async () => {
    await using store = await stores.create();
    await using logs = await twoWriters(store.target);
    await logs.foreignTurn('source');
    const engine = new Engine({
      log: logs.own,
      models: new ModelExecutor({ timeoutMs: 10_000 }),
      code: new CodeExecutor(),
      options: { lease: false },
    });
    await engine.fork({ session: 'source', at: 'invocation-1' }, { newSession: 'forked' });
    await engine.close();
    const projection = new SessionProjection('forked');
    await projection.view(logs.log, wide);
    await logs.foreignTurn('forked');
    await logs.foreignTurn('source');
    const reads = logs.wholeReads();
    const view = await projection.view(logs.log, wide);
    expect(logs.wholeReads() - reads).toBe(0);
    const read = await logs.own.scopedPrefix({ session: 'forked' }, wide);
    expect(view.events).toEqual(read.events);
    expect(view.digest).toBe(read.digest);
    expect(view.events.map(({ event }) => event.invocation.sessionId)).toEqual([
      'source',
      'source',
      'forked',
      'forked',
      'forked',
    ]);
  });

  it('two engines taking turns in one session: after its first turn, neither reads the whole session again', async () => {
    await using store = await stores.create();
    await using provider = await startScriptedProvider();
    const logs = [
      countingReads(await EventLog.open(store.target)),
      countingReads(await EventLog.open(store.target)),
    ];
    const engines = logs.map(
      ({ log }, index) =>
        new Engine({
          log,
          models: new ModelExecutor({ timeoutMs: 10_000 }),
          code: new CodeExecutor(),
          options: { lease: { hostId: `host-${index}` } },
        }),
    );
    try {
      let afterFirst: number[] = [];
      for (let n = 0; n < 8; n += 1) {
        // From the third turn on, each starts on a history the other engine has moved
        // past, is refused `session_moved` with nothing written, and starts over on the head.
        if (n < 2) provider.script(done);
        else provider.script(done, done);
        const outcome = await engines[n % 2]!.run({
          invocation: invocationAt('taking-turns', n),
          provider: provider.config({ model: 'test' }),
          configuration: configuration(),
          work: { kind: 'message', message: `turn ${n}`, tools: new ToolCatalog([]) },
        });
        expect(outcome.outcome).toEqual({ kind: 'completed' });
        expect(provider.pending, 'a start over where predicted, no other').toBe(0);
        if (n === 1) afterFirst = logs.map(({ wholeReads }) => wholeReads());
      }
      expect(afterFirst, 'each engine read the session once, at its first turn').toEqual([1, 1]);
      expect(logs.map(({ wholeReads }) => wholeReads())).toEqual(afterFirst);
    } finally {
      for (const engine of engines) await engine.close();
      for (const { log } of logs) await log.close();
    }
  });
});
