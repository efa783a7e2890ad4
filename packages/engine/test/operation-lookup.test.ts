import { EventWrite, type Fact, type Invocation, RuntimeEvent } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { ModelExecutor } from '@factum/model';
import { describe, expect, it } from 'vitest';
import { Engine, RunError } from '../src/index.ts';

const operation = 'invocation/1:call-1';
const wide = { maxEvents: 10_000, maxBytes: 16 * 1024 * 1024 };

/** A run in `sessionId` that dispatched `operation` and ended before it settled. */
async function leaveUncertain(log: EventLog, sessionId: string): Promise<void> {
  const at: Invocation = { sessionId, turnId: 'turn', runId: 'run', invocationId: 'invocation' };
  const facts: Fact[] = [
    {
      kind: 'invocation_opened',
      configuration: { cwd: '/work', toolMode: 'direct' },
      input: { kind: 'message', content: 'go', sourceMessages: [] },
    },
    {
      kind: 'model_completed',
      stepId: 'invocation/1',
      output: {
        parts: [{ kind: 'tool_call', call: { id: 'call-1', name: 'echo', input: {} } }],
        finishReason: 'tool_calls',
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      },
    },
    {
      kind: 'tool_dispatched',
      operationId: operation,
      call: { id: 'call-1', name: 'echo', input: {}, origin: { kind: 'provider', stepId: 'invocation/1' } },
    },
    {
      kind: 'invocation_ended',
      outcome: { kind: 'failed', error: { code: 'interrupted', message: 'gone' } },
    },
  ];
  for (const fact of facts) await log.append(EventWrite.plain(RuntimeEvent.create(at, fact)));
}

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'accepted',
    (error: unknown) => (RunError.isInstance(error) ? `${error.code}: ${error.message}` : String(error)),
  );

describe.each(testStores())('finding an operation named without its session on $name', (stores) => {
  it('the operations table says whose it is; an id two sessions use must be named with its session', async () => {
    await using store = await stores.create();
    const log = await EventLog.open(store.target);
    const engine = new Engine({
      log,
      models: new ModelExecutor({ timeoutMs: 10_000 }),
      code: new CodeExecutor(),
    });
    try {
      await leaveUncertain(log, 'session-b');
      expect(await log.operationSessions(operation)).toEqual(['session-b']);
      expect(await log.operationSessions('no-such-operation')).toEqual([]);
      expect(
        await codeOf(engine.resolve('no-such-operation', { outcome: 'not_run', by: 'ana', note: 'n' })),
      ).toMatch(/^not_uncertain/);

      await leaveUncertain(log, 'session-a');
      expect(await log.operationSessions(operation)).toEqual(['session-a', 'session-b']);
      const resolution = { outcome: 'not_run', by: 'ana', note: 'checked by hand' } as const;
      const events = async (session: string) => (await log.scopedPrefix({ session }, wide)).events.length;
      const before = [await events('session-a'), await events('session-b')];
      expect(await codeOf(engine.resolve(operation, resolution))).toBe(
        `invalid_input: operation ${operation} exists in sessions session-a, session-b: name the session`,
      );
      expect([await events('session-a'), await events('session-b')], 'a refusal writes nothing').toEqual(
        before,
      );

      expect(await codeOf(engine.resolve(operation, { ...resolution, sessionId: 'session-b' }))).toBe(
        'accepted',
      );
      expect([await events('session-a'), await events('session-b')]).toEqual([before[0], before[1]! + 1]);
      const last = (await log.scopedPrefix({ session: 'session-b' }, wide)).events.at(-1)!.event.fact;
      expect(last).toMatchObject({ kind: 'tool_reconciled', operationId: operation });
    } finally {
      await engine.close();
      await log.close();
    }
  }, 30_000);
});
