import { callInputDigest } from '@factum/agent-facts';
import { describe, expect, it } from 'vitest';
import { EventLog, expireApprovals, recoverExpired } from '../src/index.ts';
import { testStores } from '../src/testing.ts';
import { approvalFacts as a, headOf, parkFor } from './support/approvals.ts';
import { facts, invocation, write } from './support/facts.ts';

describe.each(testStores())('approvals on $name', (stores) => {
  it('an approved call is dispatched once, with exactly the approved input, by the continuation', async () => {
    await using store = await stores.create();
    const parked = invocation('-1');
    const next = invocation('-2');
    {
      await using log = await EventLog.open(store.target);
      await parkFor(log, parked, ['s:c']);
      const [pending] = await log.pendingApprovals();
      expect(pending).toMatchObject({
        sessionId: 'session',
        invocation: parked,
        operationId: 's:c',
        toolName: 'shell',
        input: { command: 'rm -rf build' },
        inputDigest: callInputDigest({ command: 'rm -rf build' }),
        reason: 'shell commands need approval',
      });
      expect(pending?.decision).toBeUndefined();
      // Deciding on other input, or with nothing requested, writes nothing.
      const head = await headOf(log);
      await expect(
        log.append(write(parked, a.decided('s:c', 'approved', { input: { command: 'rm -rf /' } }))),
      ).rejects.toMatchObject({ code: 'approval_input_mismatch', outcome: 'rejected' });
      await expect(log.append(write(parked, a.decided('s:x', 'approved')))).rejects.toMatchObject({
        code: 'approval_unknown',
      });
      expect(await headOf(log)).toBe(head);
      await log.append(write(parked, a.decided('s:c', 'approved', { by: 'ada', note: 'ok once' })));
      await expect(log.append(write(parked, a.decided('s:c', 'denied')))).rejects.toMatchObject({
        code: 'approval_decided_twice',
      });
      expect((await log.pendingApprovals())[0]?.decision).toMatchObject({
        decision: 'approved',
        by: 'ada',
        note: 'ok once',
      });
    }
    // Another process (a reopened log) continues: the same state, the same rules.
    await using log = await EventLog.open(store.target);
    expect((await log.pendingApprovals()).map((p) => [p.operationId, p.decision?.decision])).toEqual([
      ['s:c', 'approved'],
    ]);
    await log.append(write(next, facts.opened('continue')));
    const head = await headOf(log);
    await expect(log.append(write(next, a.dispatched('s:c', { command: 'rm -rf /' })))).rejects.toMatchObject(
      {
        code: 'approval_input_mismatch',
      },
    );
    await expect(log.append(write(next, a.dispatched('s:c', undefined, 'python')))).rejects.toMatchObject({
      code: 'approval_input_mismatch',
    });
    expect(await headOf(log)).toBe(head);
    await log.append(write(next, a.dispatched('s:c')));
    await expect(log.append(write(next, a.dispatched('s:c')))).rejects.toMatchObject({
      code: 'duplicate_dispatch',
    });
    await expect(log.append(write(parked, a.decided('s:c', 'approved')))).rejects.toMatchObject({
      code: 'approval_decided_twice',
    });
    expect(await log.pendingApprovals()).toEqual([]);
    expect((await log.invocationApprovals(parked)).map((p) => p.status)).toEqual(['dispatched']);
    // The T2 belongs to the invocation that dispatched it.
    await log.append(write(next, facts.failed('s:c')));
    expect((await log.invocationApprovals(parked)).map((p) => p.status)).toEqual(['closed']);
    expect(
      (await log.invocationRecovery(next, { maxEvents: 100, maxBytes: 1 << 20 })).uncertainOperations,
    ).toEqual([]);
  });

  it('an undecided or denied call never dispatches; a denial becomes a rejection', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    const parked = invocation('-1');
    const next = invocation('-2');
    await parkFor(log, parked, ['s:a', 's:b']);
    await log.append(write(next, facts.opened('continue')));
    const head = await headOf(log);
    await expect(log.append(write(next, a.dispatched('s:a')))).rejects.toMatchObject({
      code: 'approval_missing',
    });
    // Decisions belong to the invocation that asked; nothing is sealed but it.
    await expect(log.append(write(next, a.decided('s:a', 'denied')))).rejects.toMatchObject({
      code: 'invalid_write',
    });
    expect(await headOf(log)).toBe(head);
    await log.append(write(parked, a.decided('s:a', 'denied', { note: 'not today' })));
    await expect(log.append(write(next, a.dispatched('s:a')))).rejects.toMatchObject({
      code: 'approval_missing',
    });
    await log.append(write(next, a.rejected('s:a', { kind: 'denied', note: 'not today' })));
    await expect(log.append(write(parked, a.decided('s:b', 'approved', {})))).resolves.toBeDefined();
    // Cancelled before it ran: an approved call may still be rejected, then never runs.
    await log.append(write(next, a.rejected('s:b', { kind: 'cancelled' })));
    await expect(log.append(write(next, a.dispatched('s:b')))).rejects.toMatchObject({
      code: 'duplicate_dispatch',
    });
    expect(
      (await log.invocationApprovals(parked)).map((p) => [p.operationId, p.status, p.decision?.decision]),
    ).toEqual([
      ['s:a', 'rejected', 'denied'],
      ['s:b', 'rejected', 'approved'],
    ]);
    expect(await log.pendingApprovals()).toEqual([]);
  });

  it('requests, parks and decisions are refused where they do not belong, writing nothing', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    const at = invocation('-1');
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.dispatched('s:d', { kind: 'provider', stepId: 's' })));
    await log.append(write(at, a.requested('s:c')));
    const head = await headOf(log);
    await expect(log.append(write(at, a.requested('s:c')))).rejects.toMatchObject({
      code: 'duplicate_dispatch',
    });
    await expect(log.append(write(at, a.requested('s:d')))).rejects.toMatchObject({
      code: 'duplicate_dispatch',
    });
    await expect(log.append(write(at, a.parked('s:c', 's:zz')))).rejects.toMatchObject({
      code: 'approval_unknown',
    });
    await expect(log.append(write(at, a.parked('s:d')))).rejects.toMatchObject({ code: 'approval_unknown' });
    await expect(log.append(write(at, facts.failed('s:c')))).rejects.toMatchObject({
      code: 'unknown_operation',
    });
    await expect(log.append(write(at, a.decided('s:c', 'expired')))).rejects.toMatchObject({
      code: 'approval_not_expired',
    });
    expect(await headOf(log)).toBe(head);
    // Ended any other way, the invocation is sealed: its requests can no longer be decided.
    await log.append(write(at, facts.ended()));
    await expect(log.append(write(at, a.decided('s:c', 'approved')))).rejects.toMatchObject({
      code: 'sealed_invocation',
    });
    expect(await log.pendingApprovals()).toEqual([]);
  });

  it('expiry follows the database clock, once, and runs in the recovery sweep', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    const past = invocation('-past', 'one');
    const future = invocation('-future', 'two');
    const never = invocation('-never', 'three');
    await parkFor(log, past, ['s:p'], { expiresAt: '2001-01-01T00:00:00.000Z' });
    await parkFor(log, future, ['s:f'], { expiresAt: '2999-01-01T00:00:00+02:00' });
    await parkFor(log, never, ['s:n']);
    await expect(log.append(write(future, a.decided('s:f', 'expired')))).rejects.toMatchObject({
      code: 'approval_not_expired',
    });
    await expect(log.append(write(never, a.decided('s:n', 'expired')))).rejects.toMatchObject({
      code: 'approval_not_expired',
    });
    const report = await recoverExpired(log);
    expect(report.expiredApprovals.map((p) => p.operationId)).toEqual(['s:p']);
    expect(await expireApprovals(log)).toEqual([]);
    const pending = await log.pendingApprovals();
    expect(pending.map((p) => [p.sessionId, p.decision?.decision, p.decision?.by])).toEqual([
      ['one', 'expired', 'factum'],
      ['two', undefined, undefined],
      ['three', undefined, undefined],
    ]);
    expect(pending[1]?.expiresAt).toBe('2999-01-01T00:00:00+02:00');
    expect((await log.pendingApprovals({ sessionId: 'two' })).map((p) => p.operationId)).toEqual(['s:f']);
    // A person's later decision finds it decided.
    await expect(log.append(write(past, a.decided('s:p', 'approved')))).rejects.toMatchObject({
      code: 'approval_decided_twice',
    });
  });

  it('decisions, dispatches and refusals in one batch see each other (the writer thread on SQLite)', async () => {
    await using store = await stores.create();
    // Every write goes to the writer thread on SQLite, so the rules run there too.
    await using log = await EventLog.open(store.target, { loneCommitBudgetMs: 0 });
    await log.startWriterThread();
    const parked = invocation('-1');
    const operations = ['s:a', 's:b', 's:c', 's:d'];
    await parkFor(log, parked, operations);
    const decided = await Promise.allSettled([
      ...operations.map((operationId) => log.append(write(parked, a.decided(operationId, 'approved')))),
      log.append(write(parked, a.decided('s:a', 'denied'))),
    ]);
    expect(decided.map((result) => result.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
    ]);
    const next = invocation('-2');
    await log.append(write(next, facts.opened('continue')));
    const dispatched = await Promise.allSettled([
      ...operations.map((operationId) => log.append(write(next, a.dispatched(operationId)))),
      log.append(write(next, a.dispatched('s:b'))),
      log.append(write(next, a.dispatched('s:zz'))),
    ]);
    expect(dispatched.map((result) => result.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect((await log.invocationApprovals(parked)).map((p) => p.status)).toEqual(
      operations.map(() => 'dispatched'),
    );
  });
});
