import {
  contentDigest,
  EventWrite,
  type Fact,
  type HandoffIntent,
  RuntimeEvent,
  successorOf,
  type ToolExecutor,
  WorkspaceIdentity,
} from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog, recoverInvocations } from '@factum/event-log';
import { type TestStoreFactory, testStores } from '@factum/event-log/testing';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { ToolCatalog } from '@factum/tools';
import { describe, expect, it } from 'vitest';
import { Engine, RunError, type RunInput } from '../src/index.ts';
import { bounds, done, input, oneCall, SECRET } from './support/agent-loop.ts';

function intent(id: string): HandoffIntent {
  return {
    handoffId: id,
    hostEpoch: 'host',
    rootRunId: 'run-first',
    successorRunId: `run-${id}`,
    successorInvocationId: `invocation-${id}`,
    claimId: `claim-${id}`,
  };
}

/** Counts effects; each asserts its own T1 is durable before it runs. */
class Effect implements ToolExecutor {
  constructor(
    readonly log: EventLog,
    readonly counter: { count: number },
  ) {}
  names() {
    return ['echo'];
  }
  async invoke(_name: string, value: unknown) {
    const last = (await this.log.prefix(bounds)).events.at(-1)!.event.fact;
    if (last.kind !== 'tool_dispatched') throw new Error('effect before its durable T1');
    this.counter.count += 1;
    return value;
  }
}

/** Whether a promise settles before the next few turns of the event loop. */
async function settlesSoon(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let turn = 0; turn < 20; turn += 1) await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

async function handoffScenario(stores: TestStoreFactory, manual: boolean): Promise<void> {
  await using store = await stores.create();
  await using provider = await startScriptedProvider();
  provider.script(oneCall('echo', true), oneCall('unavailable', true), done);
  const log = await EventLog.open(store.target);
  const models = new ModelExecutor({ timeoutMs: 5_000 });
  const code = new CodeExecutor();
  const engine = new Engine({ log, models, code });
  const counter = { count: 0 };
  let run: RunInput = input(provider, 'first', new Effect(log, counter));
  run = {
    ...run,
    configuration: {
      ...run.configuration,
      workspaceIdentity: WorkspaceIdentity.fromMarkerId('ef751105-55b5-4d65-a364-646281586a17'),
    },
    mainOutputLimit: 120,
  };
  if (manual) {
    const source = {
      ...run.invocation,
      turnId: 'turn-source',
      runId: 'run-source',
      invocationId: 'invocation-source',
    };
    const branch = {
      ...source,
      turnId: 'turn-branch',
      runId: 'run-branch',
      invocationId: 'invocation-branch',
    };
    for (const [at, text] of [
      [source, 'question source'],
      [branch, 'unrelated branch'],
    ] as const) {
      const facts: Fact[] = [
        {
          kind: 'invocation_opened',
          configuration: run.configuration,
          input: { kind: 'message', content: text, sourceMessages: [] },
        },
        { kind: 'invocation_ended', outcome: { kind: 'cancelled', source: 'user' } },
      ];
      for (const fact of facts) await log.append(EventWrite.plain(RuntimeEvent.create(at, fact)));
    }
    const prefix = (await log.runSource('session', 'run-source'))!;
    run = {
      ...run,
      requestFingerprint: contentDigest('manual-resume'),
      work: { kind: 'continuation', source: prefix.boundary, tools: run.work.tools },
    };
  }
  const configuration = run.configuration;
  const running = await engine.start(run);
  await provider.requestArrived(0);
  const gate = running.handoff;
  const reservation = gate.reserve(intent('cancelled'));
  const ready = reservation.ready();
  expect(await settlesSoon(ready), 'no safe point while the model request is in flight').toBe(false);
  expect(counter.count, 'the model request has not returned a tool call').toBe(0);
  provider.release(0);
  const held = await ready;
  expect(counter.count).toBe(1);
  const midway = await log.prefix(bounds);
  expect(midway.events.some((stored) => stored.event.fact.kind === 'tool_settled')).toBe(true);
  expect(midway.projectInvocation('invocation-first').terminal).toBeUndefined();
  held.release();

  await provider.requestArrived(1);
  const next = gate.reserve(intent('committed'));
  provider.release(1);
  const committed = await next.ready();
  const expected = committed.preview();
  expect(expected.execution.replayBase !== undefined).toBe(manual);
  const receipt = await committed.commit().wait();
  expect(receipt).toEqual(expected);
  await running.wait();
  await engine.drain();
  expect(counter.count, 'rejected calls, rollback and seal never repeat effects').toBe(1);
  expect(provider.requests, 'no model request follows the committed hold').toHaveLength(2);
  const before = await log.prefix(bounds);
  expect(before.events.filter((stored) => stored.event.fact.kind === 'invocation_opened')).toHaveLength(
    manual ? 3 : 1,
  );
  expect(before.events.at(-1)!.event.fact).toEqual({
    kind: 'invocation_ended',
    outcome: { kind: 'handoff_paused', pause: expected },
  });
  const unrelated = await engine
    .start(input(provider, 'unrelated', new Effect(log, counter)))
    .catch((error) => error);
  expect(
    RunError.isInstance(unrelated) && unrelated.code,
    'sealing does not release the turn to a different admission',
  ).toBe('sealed');
  expect((await log.prefix(bounds)).digest).toBe(before.digest);
  await log.shutdown();

  const reopened = await EventLog.open(store.target);
  expect(await recoverInvocations(reopened)).toBe(0);
  const after = await reopened.prefix(bounds);
  expect(after.digest).toBe(before.digest);
  expect(after.projectInvocation('invocation-first').terminal).toBe('paused');
  const source = (await reopened.runSource('session', 'run-first'))!.boundary;
  const resumed = new Engine({ log: reopened, models, code });
  const successor = (): RunInput => {
    const base = input(provider, 'successor', new Effect(reopened, counter));
    return {
      ...base,
      invocation: successorOf(expected.intent, source.invocation),
      configuration,
      ...(expected.execution.mainOutputLimit === undefined
        ? {}
        : { mainOutputLimit: expected.execution.mainOutputLimit }),
      work: { kind: 'handoff', source, pause: expected, tools: base.work.tools },
    };
  };
  const changes: ((run: RunInput) => RunInput)[] = [
    ({ mainOutputLimit: _, ...run }) => run,
    (run) => ({ ...run, providerOptions: { changed: true } }),
    (run) => ({ ...run, provider: { ...run.provider, model: 'changed' } }),
    (run) => ({ ...run, configuration: { ...run.configuration, cwd: `${run.configuration.cwd}/changed` } }),
    (run) => ({ ...run, work: { ...run.work, tools: new ToolCatalog() } }),
  ];
  for (const change of changes) {
    const refused = await resumed.start(change(successor())).catch((error: unknown) => error);
    expect(RunError.isInstance(refused) && refused.code).toBe('fingerprint_mismatch');
    expect((await reopened.prefix(bounds)).digest).toBe(after.digest);
  }
  await resumed.run(successor());
  await resumed.drain();
  expect(provider.requests).toHaveLength(3);
  const messages = provider.requests[2]!.messages as Record<string, unknown>[];
  expect(messages.filter((message) => message.role === 'user')).toHaveLength(1);
  expect(messages.filter((message) => message.role === 'tool')).toHaveLength(2);
  const prompt = JSON.stringify(messages);
  expect(prompt).toContain(manual ? 'question source' : 'question first');
  expect(prompt).not.toContain('unrelated branch');
  expect(counter.count, 'settled effects are replayed as facts, never executed').toBe(1);
  const finished = await reopened.prefix(bounds);
  expect(finished.projectInvocation('invocation-committed').terminal).toBe('completed');
  expect(JSON.stringify(finished.events)).not.toContain(SECRET);
  await reopened.shutdown();
  await code.close();
}

describe.each(testStores())('handoff gate on $name', (stores) => {
  it('waits for settlement, a release keeps the run, and the seal survives reopen (message run)', async () => {
    await handoffScenario(stores, false);
  });

  it('waits for settlement, a release keeps the run, and the seal survives reopen (manual continuation)', async () => {
    await handoffScenario(stores, true);
  });
});
