import { describe, expect, it } from 'vitest';
import { EventLog, recoverInvocations } from '../src/index.ts';
import { testStores } from '../src/testing.ts';
import { bounds, facts, invocation, write } from './support/facts.ts';

const redispatched = (attempt: number) =>
  ({ kind: 'tool_redispatched', operationId: 's:c', attempt, reason: 'idempotent: re-run' }) as const;

describe.each(testStores())('recorded re-dispatch on $name', (stores) => {
  it('each attempt of an uncertain operation is recorded at most once and in order, also after reopen', async () => {
    await using store = await stores.create();
    const at = invocation();
    {
      await using log = await EventLog.open(store.target);
      await log.append(write(at, facts.opened()));
      await log.append(write(at, facts.dispatched('s:c', { kind: 'provider', stepId: 's' })));
      await recoverInvocations(log);
      await expect(log.append(write(at, redispatched(3)))).rejects.toMatchObject({
        code: 'duplicate_attempt',
      });
      await log.append(write(at, redispatched(2)));
      await expect(log.append(write(at, redispatched(2)))).rejects.toMatchObject({
        code: 'duplicate_attempt',
        outcome: 'rejected',
      });
      const recovery = await log.invocationRecovery(at, bounds);
      expect(recovery.uncertainOperations).toEqual(['s:c']);
      expect(recovery.attempts).toEqual({ 's:c': 2 });
    }
    await using reopened = await EventLog.open(store.target);
    const digest = (await reopened.prefix(bounds)).digest;
    await expect(reopened.append(write(at, redispatched(2)))).rejects.toMatchObject({
      code: 'duplicate_attempt',
    });
    expect((await reopened.prefix(bounds)).digest).toBe(digest);
    // The re-run's progress belongs to reconciliation, so the sealed invocation takes it.
    await reopened.append(write(at, { kind: 'tool_notified', operationId: 's:c', message: 'again' }));
    await reopened.append(write(at, redispatched(3)));
    const decision = { kind: 'failed' as const, error: { code: 'failed', message: 'no' } };
    await reopened.append(
      write(at, { kind: 'tool_reconciled', operationId: 's:c', policy: 'idempotent', decision, attempt: 3 }),
    );
    const closed = await reopened.invocationRecovery(at, bounds);
    expect(closed.uncertainOperations).toEqual([]);
    expect(closed.attempts).toEqual({});
    await expect(reopened.append(write(at, redispatched(4)))).rejects.toMatchObject({
      code: 'operation_closed',
    });
  });

  it('an ended invocation takes progress of an operation still open (its reconciliation), not of a closed one', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    const at = invocation();
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.dispatched('s:c', { kind: 'provider', stepId: 's' })));
    await log.append(write(at, facts.dispatched('s:d', { kind: 'provider', stepId: 's' })));
    const failed = { kind: 'failed' as const, error: { code: 'x', message: 'x' } };
    await log.append(write(at, { kind: 'tool_settled', operationId: 's:d', outcome: failed }));
    await recoverInvocations(log);
    await log.append(write(at, { kind: 'tool_notified', operationId: 's:c', message: 'looking' }));
    await expect(
      log.append(write(at, { kind: 'tool_notified', operationId: 's:d', message: 'stale' })),
    ).rejects.toMatchObject({ code: 'sealed_invocation' });
    await expect(
      log.append(write(at, { kind: 'tool_redispatched', operationId: 's:x', attempt: 2, reason: 'r' })),
    ).rejects.toMatchObject({ code: 'unknown_operation' });
  });
});
