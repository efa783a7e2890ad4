import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { Engine, RunError } from '../src/index.ts';
import { done, input, oneCall } from './support/agent-loop.ts';

const wide = { maxEvents: 10_000, maxBytes: 16 * 1024 * 1024 };

describe.each(testStores())('a failed commit of facts that ride along ($name)', (stores) => {
  it('the batch carrying a model step and its T1 fails: the run fails as persistence, the effect never runs', async () => {
    await using store = await stores.create();
    let fail = false;
    const log = await EventLog.open(store.target, {
      hooks: {
        beforeCommit: () => {
          if (!fail) return;
          fail = false;
          throw new Error('injected failure of the batch');
        },
      },
    });
    const engine = new Engine({
      log,
      models: new ModelExecutor({ timeoutMs: 10_000 }),
      code: new CodeExecutor(),
    });
    await using provider = await startScriptedProvider();
    provider.script(oneCall('echo'), done);
    const ran: unknown[] = [];
    const effect = { names: () => ['echo'], invoke: async (_: string, value: unknown) => ran.push(value) };
    const at = input(provider, 'fail-t1', effect);
    // The step streams: the next batch is the one that carries it with its T1.
    const result = await engine.run(at, { observer: { onObservation: () => (fail = true) } });
    expect(result.outcome).toMatchObject({ kind: 'failed', error: { code: 'persistence' } });
    expect(ran).toEqual([]);
    const kinds = (await log.invocationEvents(at.invocation, wide)).map(({ event }) => event.fact.kind);
    // Nothing of the step was acknowledged, so nothing of it is in the log.
    expect(kinds).toEqual(['invocation_opened', 'invocation_ended']);
    await engine.close();
    await log.close();
  }, 30_000);

  it('the batch carrying the last step and the end fails: the caller gets a persistence error, never success', async () => {
    await using store = await stores.create();
    let fail = false;
    const log = await EventLog.open(store.target, {
      hooks: {
        beforeCommit: () => {
          if (!fail) return;
          fail = false;
          throw new Error('injected failure of the batch');
        },
      },
    });
    const engine = new Engine({
      log,
      models: new ModelExecutor({ timeoutMs: 10_000 }),
      code: new CodeExecutor(),
      options: { sweepEveryMs: 0 },
    });
    await using provider = await startScriptedProvider();
    provider.script(oneCall('echo'), done);
    const effect = { names: () => ['echo'], invoke: async (_: string, value: unknown) => value };
    const at = input(provider, 'fail-end', effect);
    const outcome = await engine
      .run(at, {
        observer: { onObservation: (stepId) => (fail = stepId.endsWith('/2')) },
      })
      .catch((error: unknown) => error);
    expect(RunError.isInstance(outcome) && outcome.code).toBe('persistence');
    const kinds = (await log.invocationEvents(at.invocation, wide)).map(({ event }) => event.fact.kind);
    expect(kinds.filter((kind) => kind !== 'model_observed')).toEqual([
      'invocation_opened',
      'model_requested',
      'model_completed',
      'tool_dispatched',
      'tool_settled',
    ]);
    expect(await log.unfinishedInvocations(10)).toEqual([at.invocation]);
    await engine.close();
    await log.close();
  }, 30_000);
});
