import { EventWrite, type Fact, RuntimeEvent, ToolResult } from '@factum/agent-facts';
import { describe, expect, it } from 'vitest';
import { EventLog, recoverInvocations } from '../src/index.ts';
import { testStores } from '../src/testing.ts';
import { headOf } from './support/approvals.ts';
import { bounds, facts, invocation, write } from './support/facts.ts';

const operator = (
  operationId: string,
  decision: Extract<Fact, { kind: 'tool_reconciled' }>['decision'],
  extra = {},
) =>
  ({
    kind: 'tool_reconciled',
    operationId,
    policy: 'operator',
    decision,
    by: 'ada',
    note: 'checked the host',
    ...extra,
  }) as Fact;

describe.each(testStores())('operator resolution on $name', (stores) => {
  it('resolves an uncertain operation once, with who and why, and unblocks it; a reopen sees the same', async () => {
    await using store = await stores.create();
    const at = invocation('-1');
    {
      await using log = await EventLog.open(store.target);
      await log.append(write(at, facts.opened()));
      await log.append(write(at, facts.dispatched('s:c', { kind: 'provider', stepId: 's' })));
      await log.append(write(at, facts.dispatched('s:d', { kind: 'provider', stepId: 's' })));
      await recoverInvocations(log);
      expect((await log.invocationRecovery(at, bounds)).uncertainOperations.sort()).toEqual(['s:c', 's:d']);
      const head = await headOf(log);
      const { by: _by, ...noBy } = operator('s:c', { kind: 'not_run' }) as Extract<
        Fact,
        { kind: 'tool_reconciled' }
      >;
      for (const refused of [
        noBy,
        operator('s:c', { kind: 'not_run' }, { note: ' ' }),
        operator('s:c', { kind: 'unknown', note: 'no idea' }),
        operator('s:c', { kind: 'not_run' }, { attempt: 2 }),
      ]) {
        await expect(log.append(write(at, refused))).rejects.toMatchObject({ code: 'invalid_write' });
      }
      await expect(log.append(write(at, operator('s:never', { kind: 'not_run' })))).rejects.toMatchObject({
        code: 'unknown_operation',
      });
      expect(await headOf(log)).toBe(head);
      await log.append(write(at, operator('s:c', { kind: 'not_run' })));
      await expect(log.append(write(at, operator('s:c', { kind: 'not_run' })))).rejects.toMatchObject({
        code: 'operation_closed',
      });
      // A success may carry the result the operator saw.
      const result = ToolResult.of('deployed by hand');
      const event = RuntimeEvent.create(
        at,
        operator('s:d', { kind: 'succeeded', result: result.reference() }),
      );
      await log.append(EventWrite.withResult(event, result));
      expect((await log.invocationRecovery(at, bounds)).uncertainOperations).toEqual([]);
    }
    await using reopened = await EventLog.open(store.target);
    expect((await reopened.invocationRecovery(at, bounds)).uncertainOperations).toEqual([]);
    await expect(
      reopened.append(write(at, operator('s:d', { kind: 'failed', error: { code: 'x', message: 'y' } }))),
    ).rejects.toMatchObject({
      code: 'operation_closed',
    });
    const resolutions = (await reopened.invocationEvents(at, bounds)).filter(
      (stored) => stored.event.fact.kind === 'tool_reconciled',
    );
    expect(resolutions.map((stored) => stored.event.fact)).toMatchObject([
      {
        operationId: 's:c',
        policy: 'operator',
        by: 'ada',
        note: 'checked the host',
        decision: { kind: 'not_run' },
      },
      { operationId: 's:d', policy: 'operator', decision: { kind: 'succeeded' } },
    ]);
  });

  it('an operation a reconciler left unknown can still be resolved by a person', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    const at = invocation('-1');
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.dispatched('s:c', { kind: 'provider', stepId: 's' })));
    await recoverInvocations(log);
    await log.append(
      write(at, {
        kind: 'tool_reconciled',
        operationId: 's:c',
        policy: 'reconcile',
        decision: { kind: 'unknown', note: '?' },
      }),
    );
    expect((await log.invocationRecovery(at, bounds)).uncertainOperations).toEqual(['s:c']);
    await log.append(
      write(at, operator('s:c', { kind: 'failed', error: { code: 'failed', message: 'it broke' } })),
    );
    expect((await log.invocationRecovery(at, bounds)).uncertainOperations).toEqual([]);
  });
});
