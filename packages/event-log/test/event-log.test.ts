import { CommitError, EventWrite, RuntimeEvent } from '@factum/agent-facts';
import { describe, expect, it } from 'vitest';
import { AppendRefusedError, EventLog, EventLogError, recoverInvocations } from '../src/index.ts';
import { testStores } from '../src/testing.ts';
import { bounds, facts, invocation, settled, write } from './support/facts.ts';

describe.each(testStores())('EventLog on $name', (stores) => {
  it('digest and high water are identical after close and reopen', async () => {
    await using store = await stores.create();
    const at = invocation();
    const log = await EventLog.open(store.target);
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.completed('s1', [{ id: 'c1' }])));
    await log.append(write(at, facts.dispatched('s1:c1', { kind: 'provider', stepId: 's1' })));
    await log.append(settled(at, 's1:c1', { value: 42 }));
    const before = await log.prefix(bounds);
    const session = await log.scopedPrefix({ session: 'session' }, bounds);
    await log.close();

    const reopened = await EventLog.open(store.target);
    const after = await reopened.prefix(bounds);
    expect(after.digest).toBe(before.digest);
    expect(after.highWater).toBe(4);
    expect(after.events.map((stored) => stored.event)).toEqual(before.events.map((stored) => stored.event));
    expect((await reopened.scopedPrefix({ session: 'session' }, bounds)).digest).toBe(session.digest);
    expect(await reopened.verifyChain()).toMatchObject({ ok: true, events: 4 });
    const settlement = after.events[3]!.event;
    expect((await reopened.resolveToolResult('session', settlement.id)).json()).toEqual({ value: 42 });
    await reopened.close();
  });

  it('resolveToolResults reads a session’s results together, each as resolveToolResult does, leaving out ids with none', async () => {
    await using store = await stores.create();
    const at = invocation();
    const other = { ...invocation(), sessionId: 'other-session' };
    const log = await EventLog.open(store.target);
    await log.append(write(at, facts.opened()));
    await log.append(write(other, facts.opened()));
    const settlements: string[] = [];
    for (const n of [1, 2, 3]) {
      await log.append(write(at, facts.dispatched(`s1:c${n}`, { kind: 'provider', stepId: 's1' })));
      settlements.push((await log.append(settled(at, `s1:c${n}`, { value: n }))).event.id);
    }
    await log.append(write(other, facts.dispatched('s1:c1', { kind: 'provider', stepId: 's1' })));
    const foreign = (await log.append(settled(other, 's1:c1', { value: 'other' }))).event.id;
    // Enough ids that they are read in several statements, the stored ones spread among them.
    const unknown = (from: number) => Array.from({ length: 600 }, (_, n) => `no-such-event-${from + n}`);
    const ids = [settlements[0]!, ...unknown(0), settlements[1]!, ...unknown(600), settlements[2]!, foreign];
    const results = await log.resolveToolResults('session', ids);
    expect([...results.keys()].sort()).toEqual([...settlements].sort());
    for (const [n, id] of settlements.entries()) {
      expect(results.get(id)!.json()).toEqual({ value: n + 1 });
      expect(results.get(id)!.text()).toBe((await log.resolveToolResult('session', id)).text());
    }
    expect((await log.resolveToolResults('other-session', ids)).get(foreign)!.json()).toEqual({
      value: 'other',
    });
    expect((await log.resolveToolResults('session', [])).size).toBe(0);
    await log.close();
  });

  it('a second dispatch of an operation is refused, also after reopen, with nothing written', async () => {
    await using store = await stores.create();
    const at = invocation();
    const log = await EventLog.open(store.target);
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.dispatched('s1:c1', { kind: 'provider', stepId: 's1' })));
    const again = log.append(write(at, facts.dispatched('s1:c1', { kind: 'provider', stepId: 's1' })));
    await expect(again).rejects.toMatchObject({ code: 'duplicate_dispatch', outcome: 'rejected' });
    await log.close();

    const reopened = await EventLog.open(store.target);
    const digest = (await reopened.prefix(bounds)).digest;
    const error = await reopened
      .append(write(at, facts.dispatched('s1:c1', { kind: 'provider', stepId: 's1' })))
      .catch((caught: unknown) => caught);
    expect(AppendRefusedError.isInstance(error)).toBe(true);
    expect(CommitError.isInstance(error)).toBe(true);
    expect((error as AppendRefusedError).code).toBe('duplicate_dispatch');
    expect((await reopened.prefix(bounds)).digest).toBe(digest);
    await reopened.close();
  });

  it('a sealed invocation refuses every append, also after reopen', async () => {
    await using store = await stores.create();
    const at = invocation();
    const log = await EventLog.open(store.target);
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.ended()));
    await expect(log.append(write(at, facts.completed('s', [])))).rejects.toMatchObject({
      code: 'sealed_invocation',
    });
    await log.close();
    const reopened = await EventLog.open(store.target);
    await expect(
      reopened.append(write(at, facts.dispatched('s:c', { kind: 'provider', stepId: 's' }))),
    ).rejects.toMatchObject({ code: 'sealed_invocation' });
    await expect(reopened.append(write(at, facts.ended()))).rejects.toMatchObject({
      code: 'sealed_invocation',
    });
    expect((await reopened.prefix(bounds)).highWater).toBe(2);
    await reopened.close();
  });

  it('refuses a settlement without its dispatch, an event of an unopened invocation and a second live invocation', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    const first = invocation('-1');
    await expect(log.append(write(first, facts.completed('s', [])))).rejects.toMatchObject({
      code: 'unknown_invocation',
    });
    await log.append(write(first, facts.opened()));
    await expect(log.append(write(first, facts.failed('s:nothing')))).rejects.toMatchObject({
      code: 'unknown_operation',
    });
    await expect(log.append(settled(first, 's:nothing', 1))).rejects.toMatchObject({
      code: 'unknown_operation',
    });
    await expect(log.append(write(invocation('-2'), facts.opened()))).rejects.toMatchObject({
      code: 'session_busy',
    });
    await expect(
      log.append(
        write(first, facts.dispatched('child', { kind: 'code_mode', parentOperationId: 'missing' })),
      ),
    ).rejects.toMatchObject({ code: 'parent_not_open' });
    await log.append(write(invocation('-other', 'other-session'), facts.opened()));
    await log.append(write(first, facts.ended()));
    await log.append(write(invocation('-2'), facts.opened()));
    expect((await log.prefix(bounds)).highWater).toBe(4);
  });

  it('a handoff pause holds the session for its successor, across reopen', async () => {
    await using store = await stores.create();
    const at = invocation('-first');
    const log = await EventLog.open(store.target);
    await log.append(write(at, facts.opened()));
    const pause = {
      intent: {
        handoffId: 'h',
        hostEpoch: 'host',
        rootRunId: 'run-first',
        successorRunId: 'run-next',
        successorInvocationId: 'invocation-next',
        claimId: 'c',
      },
      execution: { fingerprint: `sha256:${'1'.repeat(64)}`, steps: 1 },
    };
    await log.append(write(at, { kind: 'invocation_ended', outcome: { kind: 'handoff_paused', pause } }));
    await log.close();
    const reopened = await EventLog.open(store.target);
    await expect(reopened.append(write(invocation('-other'), facts.opened()))).rejects.toMatchObject({
      code: 'session_held',
    });
    await reopened.append(
      write({ ...at, runId: 'run-next', invocationId: 'invocation-next' }, facts.opened()),
    );
    expect((await reopened.prefix(bounds)).projectInvocation('invocation-first').terminal).toBe('paused');
    await reopened.close();
  });

  it('recovery lists exactly the dispatched-unsettled operations, parents included, and the undispatched calls', async () => {
    await using store = await stores.create();
    const at = invocation();
    const done = invocation('-done', 'other');
    const log = await EventLog.open(store.target);
    await log.append(write(done, facts.opened()));
    await log.append(write(done, facts.ended()));
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.completed('s', [{ id: 'parent' }, { id: 'settled' }, { id: 'never' }])));
    await log.append(write(at, facts.dispatched('s:parent', { kind: 'provider', stepId: 's' })));
    await log.append(
      write(at, facts.dispatched('cell', { kind: 'code_cell', parentOperationId: 's:parent' })),
    );
    await log.append(write(at, facts.dispatched('child', { kind: 'code_mode', parentOperationId: 'cell' })));
    await log.append(write(at, facts.dispatched('s:settled', { kind: 'provider', stepId: 's' })));
    await log.append(write(at, facts.failed('s:settled')));
    await log.close();

    const reopened = await EventLog.open(store.target);
    const recovery = await reopened.invocationRecovery(at, bounds);
    expect([...recovery.uncertainOperations].sort()).toEqual(['cell', 'child', 's:parent']);
    expect(recovery.undispatchedCalls.map((call) => call.operationId)).toEqual(['s:never']);
    expect(await reopened.unfinishedInvocations(10)).toEqual([at]);

    expect(await recoverInvocations(reopened)).toBe(1);
    expect(await reopened.unfinishedInvocations(10)).toEqual([]);
    expect(await recoverInvocations(reopened)).toBe(0);
    const after = await reopened.invocationRecovery(at, bounds);
    expect([...after.uncertainOperations].sort()).toEqual(['cell', 'child', 's:parent']);
    expect(after.undispatchedCalls).toEqual([]);
    const kinds = (await reopened.prefix(bounds)).events.slice(-2).map((stored) => stored.event.fact);
    expect(kinds[0]).toMatchObject({
      kind: 'tool_rejected',
      operationId: 's:never',
      reason: { kind: 'interrupted' },
    });
    expect(kinds[1]).toMatchObject({
      kind: 'invocation_ended',
      outcome: { kind: 'failed', error: { code: 'interrupted' } },
    });
    await reopened.close();
  });

  it('a reconciliation may close an uncertain operation after the invocation ended, once', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    const at = invocation();
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.dispatched('s:c', { kind: 'provider', stepId: 's' })));
    await recoverInvocations(log);
    const unknown = { kind: 'unknown' as const, note: 'cannot tell yet' };
    await log.append(
      write(at, { kind: 'tool_reconciled', operationId: 's:c', policy: 'reconcile', decision: unknown }),
    );
    expect((await log.invocationRecovery(at, bounds)).uncertainOperations).toEqual(['s:c']);
    const failed = {
      kind: 'failed' as const,
      error: { code: 'not_done', message: 'the file was never written' },
    };
    await log.append(
      write(at, { kind: 'tool_reconciled', operationId: 's:c', policy: 'reconcile', decision: failed }),
    );
    expect((await log.invocationRecovery(at, bounds)).uncertainOperations).toEqual([]);
    await expect(
      log.append(
        write(at, { kind: 'tool_reconciled', operationId: 's:c', policy: 'reconcile', decision: failed }),
      ),
    ).rejects.toMatchObject({ code: 'operation_closed' });
  });

  it('prefix bounds are enforced with a typed error instead of a cut history', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    const at = invocation();
    await log.append(write(at, facts.opened()));
    for (let index = 0; index < 5; index += 1) {
      await log.append(
        write(at, { kind: 'model_observed', stepId: 's', observation: { kind: 'text_delta', text: 'x' } }),
      );
    }
    expect((await log.prefix({ maxEvents: 6, maxBytes: 1 << 20 })).events).toHaveLength(6);
    const tooMany = await log.prefix({ maxEvents: 5, maxBytes: 1 << 20 }).catch((error: unknown) => error);
    expect(EventLogError.isInstance(tooMany) && tooMany.code).toBe('bounds_exceeded');
    await expect(log.scopedPrefix({ session: 'session' }, { maxEvents: 100, maxBytes: 300 })).rejects.toThrow(
      /more than 300 bytes/,
    );
    expect((await log.read({ afterSequence: 2, limit: 2 })).map((stored) => stored.sequence)).toEqual([3, 4]);
  });

  it('run source names the last event of a run as its boundary', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    const at = invocation('-a');
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.ended()));
    const scoped = await log.scopedPrefix({ session: 'session' }, bounds);
    const source = await log.runSource('session', 'run-a');
    expect(source?.boundary).toEqual({ invocation: at, highWater: 2, digest: scoped.digest });
    expect((await log.runSource('session', 'run-a', 1))?.boundary.highWater).toBe(1);
    expect(await log.runSource('session', 'run-missing')).toBeUndefined();
  });

  it('refuses writes after close with a typed error', async () => {
    await using store = await stores.create();
    const log = await EventLog.open(store.target);
    await log.close();
    await expect(log.append(write(invocation(), facts.opened()))).rejects.toMatchObject({ code: 'closed' });
    expect(() => EventWrite.plain(RuntimeEvent.create(invocation(), facts.opened()))).not.toThrow();
  });
});
