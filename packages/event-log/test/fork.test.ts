import type { Fact, Invocation } from '@factum/agent-facts';
import { describe, expect, it } from 'vitest';
import { AppendRefusedError, EventLog, EventLogError } from '../src/index.ts';
import { testStores } from '../src/testing.ts';
import { bounds, facts, invocation, write } from './support/facts.ts';

const requested = (stepId: string): Fact => ({
  kind: 'model_requested',
  stepId,
  modelId: 'm',
  purpose: 'main',
  source: { scope: { kind: 'global' }, highWater: 0, digest: 'x' },
  inputDigest: 'x',
  routeIdentity: 'r',
});
const forkAt = (sessionId: string): Invocation => ({
  sessionId,
  turnId: 'fork',
  runId: 'fork',
  invocationId: 'fork',
});

async function refusal(promise: Promise<unknown>): Promise<string | undefined> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return AppendRefusedError.isInstance(error) ? error.code : String(error);
}

describe.each(testStores())('forks in the log on $name', (stores) => {
  it('a fork references its source’s prefix: scopedPrefix reads through it, its own chain vouches for it, and the global chain verifies', async () => {
    await using store = await stores.create();
    const log = await EventLog.open(store.target);
    const a = invocation('-a', 'a');
    for (const fact of [facts.opened('one'), requested('-a/1'), facts.ended()])
      await log.append(write(a, fact));
    // A later fact of the source is not in a fork taken before it.
    const point = await log.forkPoint('a');
    const b = invocation('-b', 'a');
    await log.append(write(b, facts.opened('two')));
    await log.append(write(forkAt('f'), { kind: 'session_forked', ...point }));
    const f = invocation('-f', 'f');
    for (const fact of [facts.opened('three'), facts.ended()]) await log.append(write(f, fact));
    const prefix = await log.scopedPrefix({ session: 'f' }, bounds);
    expect(prefix.events.map(({ event }) => `${event.invocation.sessionId} ${event.fact.kind}`)).toEqual([
      'a invocation_opened',
      'a model_requested',
      'a invocation_ended',
      'f session_forked',
      'f invocation_opened',
      'f invocation_ended',
    ]);
    expect(await log.sessionHead('f')).toEqual({ highWater: prefix.highWater, digest: prefix.digest });
    await expect(
      log.scopedPrefix({ session: 'f' }, { maxEvents: 5, maxBytes: 1 << 20 }),
    ).rejects.toMatchObject({
      code: 'bounds_exceeded',
    });

    // A fork of the fork at a boundary of its own, and one at a boundary it inherits.
    await log.append(write(forkAt('g'), { kind: 'session_forked', ...(await log.forkPoint('f')) }));
    const inherited = await log.forkPoint('f', 'invocation-a');
    expect(inherited.source.invocation.sessionId, 'named where it lies').toBe('a');
    const g = await log.scopedPrefix({ session: 'g' }, bounds);
    expect(g.events.map(({ event }) => event.invocation.sessionId)).toEqual([
      'a',
      'a',
      'a',
      'f',
      'f',
      'f',
      'g',
    ]);
    await log.close();

    const reopened = await EventLog.open(store.target);
    expect((await reopened.scopedPrefix({ session: 'g' }, bounds)).events).toEqual(g.events);
    expect(await reopened.verifyChain()).toMatchObject({ ok: true });
    await reopened.close();
  });

  it('a step boundary is the source session’s last event before that step’s request; the rules check every part of it', async () => {
    await using store = await stores.create();
    const log = await EventLog.open(store.target);
    const a = invocation('-a', 'a');
    for (const fact of [
      facts.opened(),
      requested('invocation-a/1'),
      requested('invocation-a/2'),
      facts.ended(),
    ]) {
      await log.append(write(a, fact));
    }
    const point = await log.forkPoint('a', 'invocation-a/2');
    expect(point.step).toBe('invocation-a/2');
    const events = (await log.scopedPrefix({ session: 'a' }, bounds)).events;
    expect(point.source.highWater).toBe(events[1]!.sequence);
    await log.append(write(forkAt('f'), { kind: 'session_forked', ...point }));
    expect(
      (await log.scopedPrefix({ session: 'f' }, bounds)).events.map(({ event }) => event.fact.kind),
    ).toEqual(['invocation_opened', 'model_requested', 'session_forked']);

    const at = (sessionId: string, fact: Partial<Extract<Fact, { kind: 'session_forked' }>>) =>
      log.append(write(forkAt(sessionId), { kind: 'session_forked', ...point, ...fact }));
    expect(await refusal(at('x1', { step: 'invocation-a/1' })), 'another step').toBe('invalid_boundary');
    expect(await refusal(at('x2', { step: undefined })), 'not an end').toBe('invalid_boundary');
    expect(await refusal(at('x3', { source: { ...point.source, digest: 'sha256:other' } }))).toBe(
      'invalid_boundary',
    );
    expect(
      await refusal(at('x4', { source: { ...point.source, highWater: point.source.highWater + 1 } })),
    ).toBe('invalid_boundary');
    const elsewhere = { ...point.source.invocation, sessionId: 'nowhere' };
    expect(await refusal(at('x5', { source: { ...point.source, invocation: elsewhere } }))).toBe(
      'unknown_session',
    );
    const otherRun = { ...point.source.invocation, runId: 'run-other' };
    expect(await refusal(at('x6', { source: { ...point.source, invocation: otherRun } }))).toBe(
      'invalid_boundary',
    );
    expect(await refusal(at('f', {})), 'a fork is a session’s first fact').toBe('session_exists');
    expect(await refusal(at('a', {})), 'into itself').toBe('invalid_write');

    // A live invocation is never cut, at its steps or by name.
    const live = invocation('-live', 'a');
    await log.append(write(live, facts.opened()));
    await log.append(write(live, requested('invocation-live/1')));
    expect(await refusal(log.forkPoint('a', 'invocation-live'))).toBe('source_live');
    expect(await refusal(log.forkPoint('a', 'invocation-live/1'))).toBe('source_live');
    const cut = {
      ...point.source.invocation,
      turnId: live.turnId,
      runId: live.runId,
      invocationId: live.invocationId,
    };
    expect(await refusal(at('x7', { source: { ...point.source, invocation: cut } }))).toBe('source_live');
    // Nothing of a refused fork was written.
    for (const session of ['x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7']) {
      expect(await log.sessionHead(session)).toMatchObject({ highWater: 0 });
    }
    expect(await log.verifyChain()).toMatchObject({ ok: true });
    await log.close();
  });

  it('names no boundary it cannot find: an unknown session, step or invocation, or no ended invocation', async () => {
    await using store = await stores.create();
    const log = await EventLog.open(store.target);
    await log.append(write(invocation('-a', 'a'), facts.opened()));
    const refused = async (at?: string, session = 'a') => {
      const error = await log.forkPoint(session, at).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(EventLogError.isInstance(error) || AppendRefusedError.isInstance(error)).toBe(true);
      return (error as { code: string }).code;
    };
    expect(await refused(undefined, 'nowhere')).toBe('unknown_session');
    expect(await refused()).toBe('invalid_boundary');
    expect(await refused('invocation-none')).toBe('invalid_boundary');
    expect(await refused('invocation-none/1')).toBe('invalid_boundary');
    await log.close();
  });
});
