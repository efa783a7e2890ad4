import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Fact } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../src/index.ts';
import { SessionProjection } from '../src/session-projection.ts';
import { bounds, done, input, oneCall, temporaryDirectory } from './support/agent-loop.ts';
import { bundleChildren, nodeArgs } from './support/child-node.ts';
import { ended, factWrite, opened } from './support/session-writes.ts';

const child = fileURLToPath(new URL('./support/submit-child.ts', import.meta.url));
beforeAll(() => bundleChildren(child));
const write = (n: number, fact: Fact) => factWrite('shared', n, fact);

/**
 * A history and, on another connection to the same file, a foreign writer: what it
 * appends is seen only by a view that reads the session's head.
 */
async function sharedSession(file: string) {
  const log = await EventLog.open(file);
  const other = await EventLog.open(file);
  await log.append(write(1, opened));
  await log.append(write(1, ended));
  let next = 2;
  return {
    log,
    foreignTurn: async () => {
      await other.append(write(next, opened));
      await other.append(write(next, ended));
      next += 1;
    },
    [Symbol.asyncDispose]: async () => {
      await other.close();
      await log.close();
    },
  };
}

describe('a view’s check against the log’s head is lent once, to the view right after it', () => {
  it('the next view that takes it builds on it without reading the head; the view after that reads it again', async () => {
    using directory = temporaryDirectory();
    await using session = await sharedSession(directory.file);
    const projection = new SessionProjection('shared');
    expect((await projection.view(session.log, bounds, { lend: true })).events).toHaveLength(2);
    await session.foreignTurn();
    const taken = await projection.view(session.log, bounds, { take: true });
    expect(taken.events, 'the lent check stands for the read it replaced').toHaveLength(2);
    const checked = await projection.view(session.log, bounds, { take: true });
    expect(checked.events.map(({ event }) => event.invocation.invocationId)).toEqual([
      'invocation-1',
      'invocation-1',
      'invocation-2',
      'invocation-2',
    ]);
    expect(checked.highWater).toBe((await session.log.sessionHead('shared')).highWater);
  });

  it('a view that does not take it, or a fact this process committed without the session digest that vouches for it, ends the loan', async () => {
    using directory = temporaryDirectory();
    await using session = await sharedSession(directory.file);
    const projection = new SessionProjection('shared');
    await projection.view(session.log, bounds, { lend: true });
    await projection.view(session.log, bounds);
    await session.foreignTurn();
    expect((await projection.view(session.log, bounds, { take: true })).events).toHaveLength(4);

    await projection.view(session.log, bounds, { lend: true });
    for (const own of [write(9, opened), write(9, ended)]) {
      projection.advance((await session.log.append(own)).sequence, own);
    }
    await session.foreignTurn();
    const after = await projection.view(session.log, bounds, { take: true });
    expect(after.events.map(({ event }) => event.invocation.invocationId).slice(4)).toEqual([
      'invocation-9',
      'invocation-9',
      'invocation-3',
      'invocation-3',
    ]);
  });

  it('a commit whose session digest extends the history lends its check; one that shows another writer’s facts before it does not', async () => {
    using directory = temporaryDirectory();
    await using session = await sharedSession(directory.file);
    const projection = new SessionProjection('shared');
    await projection.view(session.log, bounds);
    const commit = async (n: number, fact: Fact) => {
      const own = write(n, fact);
      const receipt = await session.log.commit(own);
      projection.advance(receipt.sequence, own, receipt.sessionDigest);
    };
    await commit(7, opened);
    await commit(7, ended);
    await session.foreignTurn();
    const ids = async () =>
      (await projection.view(session.log, bounds, { take: true })).events.map(
        ({ event }) => event.invocation.invocationId,
      );
    expect(await ids(), 'the history was whole when the commit was made').toHaveLength(4);
    expect(await ids(), 'the loan is spent: the head is read').toHaveLength(6);

    // Another writer's turn lands before this process's next commit: the digest the log
    // gives that commit does not extend the history in memory, so nothing is lent.
    await session.foreignTurn();
    await commit(8, opened);
    expect((await ids()).slice(6)).toEqual(['invocation-3', 'invocation-3', 'invocation-8']);

    // A held handoff ends a commit's loan.
    await commit(8, ended);
    projection.endLoan();
    await session.foreignTurn();
    expect((await ids()).slice(9)).toEqual(['invocation-8', 'invocation-4', 'invocation-4']);
  });

  it('a view that was refused lends nothing', async () => {
    using directory = temporaryDirectory();
    await using session = await sharedSession(directory.file);
    const projection = new SessionProjection('shared');
    await projection.view(session.log, bounds);
    await session.foreignTurn();
    // Too small a bound: the view fails, as the log's read does, and keeps nothing.
    await expect(
      projection.view(session.log, { maxEvents: 1, maxBytes: 1 << 20 }, { lend: true }),
    ).rejects.toMatchObject({ code: 'bounds_exceeded' });
    expect((await projection.view(session.log, bounds, { take: true })).events).toHaveLength(4);
  });
});

describe.each(testStores())('two processes taking turns in one session, on $name', (stores) => {
  it('every step of a turn sees the other process’s turn: a first step built on the stale history is refused with its opening, nothing of it written and no effect run, and the run starts over on the new head', async () => {
    await using store = await stores.create();
    await using provider = await startScriptedProvider();
    const log = await EventLog.open(store.target);
    const code = new CodeExecutor();
    const engine = new Engine({ log, models: new ModelExecutor({ timeoutMs: 30_000 }), code });
    let echoes = 0;
    const echo = {
      names: () => ['echo'],
      invoke: async (_name: string, value: unknown) => {
        echoes += 1;
        return value as never;
      },
    };
    const turn = async (suffix: string) => {
      const base = input(provider, suffix, echo);
      const outcome = await engine.run({ ...base, invocation: { ...base.invocation, sessionId: 'shared' } });
      expect(outcome.outcome.kind).toBe('completed');
      return outcome;
    };
    try {
      provider.script(oneCall('echo'), done);
      await turn('p1');
      // The other process's turn: this process's projection of the session is now
      // behind the log, and this process does not read the head before its next turn.
      provider.script({ ...done, text: 'sent' });
      const { stdout } = await promisify(execFile)(
        'node',
        nodeArgs(child, [
          JSON.stringify(store.target),
          provider.baseUrl,
          'c1',
          'key-c1',
          'from the other process',
          '10000',
        ]),
      );
      expect(stdout).toContain('"outcome":{"kind":"completed"}');
      const before = provider.requests.length;
      echoes = 0;
      // The stale first step asks for the tool too: its T1 rides with the refused opening.
      provider.script(oneCall('echo'), oneCall('echo'), done);
      const outcome = await turn('p2');
      expect(outcome.steps).toBe(2);
      expect(echoes, 'the stale step’s call never ran').toBe(1);
      const contents = (body: Readonly<Record<string, unknown>>) =>
        (body.messages as { role: string; content?: unknown }[]).map((message) => message.content);
      const [stale, first, second] = provider.requests.slice(before).map(contents);
      expect(provider.requests.length - before).toBe(3);
      expect(stale, 'the discarded step, built on the history in memory').not.toContain(
        'from the other process',
      );
      expect(first, 'the turn’s first step').toContain('from the other process');
      expect(second, 'the step after the settlement').toContain('from the other process');
      expect(second!.slice(0, first!.length)).toEqual(first);
      expect(second).toHaveLength(first!.length + 2);
      // The log holds the turn once: one opening, the two steps it recorded, one dispatch.
      const facts = (await log.invocationEvents(outcome.invocation, bounds)).map(
        ({ event }) => event.fact.kind,
      );
      expect(facts.filter((kind) => kind === 'invocation_opened')).toHaveLength(1);
      expect(facts.filter((kind) => kind === 'model_requested')).toHaveLength(2);
      expect(facts.filter((kind) => kind === 'tool_dispatched')).toHaveLength(1);
      expect(facts.at(-1)).toBe('invocation_ended');
    } finally {
      await engine.close();
      await log.close();
      await code.close();
    }
  });
});
