import {
  EventWrite,
  type Fact,
  type Invocation,
  RuntimeEvent,
  type ToolCallContext,
  type ToolExecutor,
} from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { AppendRefusedError, EventLog } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { ModelExecutor } from '@factum/model';
import { type ScriptedProvider, startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { Engine, RunError, type RunInput } from '../src/index.ts';
import { bounds, done, input, oneCall } from './support/agent-loop.ts';

/** An effect ledger: every execution of the tool, by session and operation. */
class Ledger implements ToolExecutor {
  readonly runs: string[] = [];
  names() {
    return ['echo'];
  }
  async invoke(_name: string, value: unknown, context: ToolCallContext) {
    this.runs.push(`${context.sessionId} ${context.operationId}`);
    return value;
  }
}

/** A message run `suffix` in `sessionId`. */
function turn(provider: ScriptedProvider, sessionId: string, suffix: string, ledger: Ledger): RunInput {
  const base = input(provider, suffix, ledger);
  return { ...base, invocation: { ...base.invocation, sessionId } };
}

const kinds = (events: readonly { event: RuntimeEvent }[]) => events.map(({ event }) => event.fact.kind);
const roles = (request: Readonly<Record<string, unknown>>) =>
  (request.messages as { role: string; content?: unknown }[]).map((message) =>
    message.role === 'user' ? `user:${String(message.content)}` : message.role,
  );

async function opened(target: Parameters<typeof EventLog.open>[0]) {
  const log = await EventLog.open(target);
  const engine = new Engine({
    log,
    models: new ModelExecutor({ timeoutMs: 5_000 }),
    code: new CodeExecutor(),
  });
  return {
    log,
    engine,
    async [Symbol.asyncDispose]() {
      await engine.close();
      await log.close();
    },
  };
}

describe.each(testStores())('fork on $name', (stores) => {
  it('a fork at an invocation end references the prefix; its turn runs new effects once, the prefix none again', async () => {
    await using store = await stores.create();
    await using provider = await startScriptedProvider();
    provider.script(oneCall('echo'), done, oneCall('echo'), done);
    const ledger = new Ledger();
    let sourceDigest: string;
    {
      await using runtime = await opened(store.target);
      expect(await runtime.engine.run(turn(provider, 'session', 'first', ledger))).toMatchObject({
        outcome: { kind: 'completed' },
      });
      sourceDigest = (await runtime.log.sessionHead('session')).digest;
      const fork = await runtime.engine.fork(
        { session: 'session', at: 'invocation-first' },
        { newSession: 'forked' },
      );
      expect(fork).toMatchObject({ sessionId: 'forked', source: { invocation: { sessionId: 'session' } } });
      expect(fork.step).toBeUndefined();
      expect(await runtime.engine.run(turn(provider, 'forked', 'second', ledger))).toMatchObject({
        outcome: { kind: 'completed' },
      });
    }
    expect(ledger.runs, 'one execution per turn, each under its own session and operation').toEqual([
      'session invocation-first/1:call-1',
      'forked invocation-second/1:call-1',
    ]);
    expect(roles(provider.requests[2]!), "the fork's first request carries the source's turn").toEqual([
      'user:question first',
      'assistant',
      'tool',
      'assistant',
      'user:question second',
    ]);

    await using reopened = await opened(store.target);
    const history = await reopened.log.scopedPrefix({ session: 'forked' }, bounds);
    const source = await reopened.log.scopedPrefix({ session: 'session' }, bounds);
    expect(source.digest, 'the source is untouched').toBe(sourceDigest);
    expect(history.events.slice(0, source.events.length)).toEqual(source.events);
    expect(kinds(history.events.slice(source.events.length))).toEqual([
      'session_forked',
      'invocation_opened',
      'model_requested',
      'model_observed',
      'model_completed',
      'tool_dispatched',
      'tool_settled',
      'model_requested',
      'model_observed',
      'model_completed',
      'invocation_ended',
    ]);
    const own = await reopened.log.read({ scope: { session: 'forked' } });
    expect(own.length, 'the prefix is referenced, not copied').toBe(11);
    expect(await reopened.log.sessionHead('forked')).toEqual({
      highWater: history.highWater,
      digest: history.digest,
    });
    expect(await reopened.log.verifyChain()).toMatchObject({ ok: true });
  }, 30_000);

  it('a fork at a step starts before its request: the earlier steps and their results are history', async () => {
    await using store = await stores.create();
    await using provider = await startScriptedProvider();
    provider.script(oneCall('echo'), oneCall('echo'), done, done);
    const ledger = new Ledger();
    await using runtime = await opened(store.target);
    await runtime.engine.run(turn(provider, 'session', 'first', ledger));
    const steps = (await runtime.log.scopedPrefix({ session: 'session' }, bounds)).events.flatMap(
      ({ event }) => (event.fact.kind === 'model_requested' ? [event.fact.stepId] : []),
    );
    expect(steps).toHaveLength(3);
    const fork = await runtime.engine.fork({ session: 'session', at: steps[1] }, { newSession: 'forked' });
    expect(fork.step).toBe(steps[1]);
    const history = await runtime.log.scopedPrefix({ session: 'forked' }, bounds);
    const inherited = history.events.filter(({ event }) => event.invocation.sessionId === 'session');
    expect(kinds(inherited), 'the prefix stops right before the step').toEqual([
      'invocation_opened',
      'model_requested',
      'model_observed',
      'model_completed',
      'tool_dispatched',
      'tool_settled',
    ]);
    expect(await runtime.engine.run(turn(provider, 'forked', 'second', ledger))).toMatchObject({
      outcome: { kind: 'completed' },
    });
    expect(ledger.runs).toEqual(['session invocation-first/1:call-1', 'session invocation-first/2:call-1']);
    expect(roles(provider.requests[3]!)).toEqual([
      'user:question first',
      'assistant',
      'tool',
      'user:question second',
    ]);
    expect(await runtime.log.verifyChain()).toMatchObject({ ok: true });
  }, 30_000);

  it('a fork of a fork reads through both prefixes; a boundary in an inherited prefix names its own session', async () => {
    await using store = await stores.create();
    await using provider = await startScriptedProvider();
    provider.script(done, done, done);
    const ledger = new Ledger();
    await using runtime = await opened(store.target);
    await runtime.engine.run(turn(provider, 'a', 'first', ledger));
    await runtime.engine.fork({ session: 'a' }, { newSession: 'b' });
    await runtime.engine.run(turn(provider, 'b', 'second', ledger));
    const c = await runtime.engine.fork({ session: 'b' }, { newSession: 'c' });
    expect(c.source.invocation).toMatchObject({ sessionId: 'b', invocationId: 'invocation-second' });
    const d = await runtime.engine.fork({ session: 'b', at: 'invocation-first' }, { newSession: 'd' });
    expect(d.source.invocation, 'forked from where the boundary lies').toMatchObject({ sessionId: 'a' });
    await runtime.engine.run(turn(provider, 'c', 'third', ledger));
    expect(roles(provider.requests[2]!)).toEqual([
      'user:question first',
      'assistant',
      'user:question second',
      'assistant',
      'user:question third',
    ]);
    const history = await runtime.log.scopedPrefix({ session: 'c' }, bounds);
    expect(history.events.map(({ event }) => event.invocation.sessionId)).toEqual([
      ...Array(5).fill('a'),
      ...Array(6).fill('b'),
      ...Array(6).fill('c'),
    ]);
    expect(await runtime.log.verifyChain()).toMatchObject({ ok: true });
  }, 30_000);

  it('the log refuses forks that cut a live run, name no boundary of the source, or reuse a session', async () => {
    await using store = await stores.create();
    await using provider = await startScriptedProvider();
    provider.script(done, oneCall('echo', true), done);
    const ledger = new Ledger();
    await using runtime = await opened(store.target);
    await runtime.engine.run(turn(provider, 'session', 'first', ledger));
    const refused = async (promise: Promise<unknown>) => {
      const error = await promise.then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(AppendRefusedError.isInstance(error), String(error)).toBe(true);
      return (error as AppendRefusedError).code;
    };
    expect(await refused(runtime.engine.fork({ session: 'nowhere' }))).toBe('unknown_session');
    expect(await refused(runtime.engine.fork({ session: 'session', at: 'invocation-x' }))).toBe(
      'invalid_boundary',
    );
    expect(await refused(runtime.engine.fork({ session: 'session', at: 'invocation-first/9' }))).toBe(
      'invalid_boundary',
    );
    await runtime.engine.fork({ session: 'session' }, { newSession: 'taken' });
    expect(await refused(runtime.engine.fork({ session: 'session' }, { newSession: 'taken' }))).toBe(
      'session_exists',
    );
    expect(await refused(runtime.engine.fork({ session: 'session' }, { newSession: 'session' }))).toBe(
      'invalid_write',
    );

    // A later run of the source is live: its end cannot be forked, an earlier end can.
    const live = await runtime.engine.start(turn(provider, 'session', 'live', ledger), {
      durableStart: true,
    });
    await provider.requestArrived(1);
    expect(await refused(runtime.engine.fork({ session: 'session', at: 'invocation-live' }))).toBe(
      'source_live',
    );
    const beside = await runtime.engine.fork({ session: 'session' }, { newSession: 'beside' });
    expect(beside.source.invocation.invocationId).toBe('invocation-first');

    // The rules themselves check a boundary written by hand: its digest must be the source's.
    const forged = RuntimeEvent.create(
      { sessionId: 'forged', turnId: 'fork', runId: 'fork', invocationId: 'fork' },
      { kind: 'session_forked', source: { ...beside.source, digest: 'sha256:forged' } },
    );
    expect(await refused(runtime.log.append(EventWrite.plain(forged)))).toBe('invalid_boundary');
    const cut: Invocation = { ...beside.source.invocation, invocationId: 'invocation-live' };
    const cutting = RuntimeEvent.create(
      { sessionId: 'cutting', turnId: 'fork', runId: 'fork', invocationId: 'fork' },
      {
        kind: 'session_forked',
        source: { ...beside.source, invocation: { ...cut, turnId: 'turn-live', runId: 'run-live' } },
      },
    );
    expect(await refused(runtime.log.append(EventWrite.plain(cutting)))).toBe('source_live');
    provider.release(1);
    await live.wait();
    await runtime.engine.drain();
    expect(await runtime.log.sessionHead('forged')).toMatchObject({ highWater: 0 });
    expect(await runtime.log.verifyChain()).toMatchObject({ ok: true });
  }, 30_000);
  it('an operation uncertain at the fork point stays uncertain in the fork and is never run again', async () => {
    await using store = await stores.create();
    await using provider = await startScriptedProvider();
    provider.script(done);
    const ledger = new Ledger();
    await using runtime = await opened(store.target);
    const first: Invocation = {
      sessionId: 'session',
      turnId: 'turn-first',
      runId: 'run-first',
      invocationId: 'invocation-first',
    };
    const stepId = 'invocation-first/1';
    const facts: Fact[] = [
      {
        kind: 'invocation_opened',
        configuration: { cwd: '/workspace', toolMode: 'direct' },
        input: { kind: 'message', content: 'question first', sourceMessages: [] },
      },
      {
        kind: 'model_completed',
        stepId,
        output: {
          parts: [{ kind: 'tool_call', call: { id: 'call-1', name: 'echo', input: {} } }],
          finishReason: 'tool_calls',
          usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
        },
      },
      {
        kind: 'tool_dispatched',
        operationId: `${stepId}:call-1`,
        call: { id: 'call-1', name: 'echo', input: {}, origin: { kind: 'provider', stepId } },
      },
      {
        kind: 'invocation_ended',
        outcome: { kind: 'failed', error: { code: 'crashed', message: 'the host died' } },
      },
    ];
    for (const fact of facts) await runtime.log.append(EventWrite.plain(RuntimeEvent.create(first, fact)));
    await runtime.engine.fork({ session: 'session' }, { newSession: 'forked' });
    const refused = await runtime.engine.run(turn(provider, 'forked', 'second', ledger)).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(RunError.isInstance(refused) && refused.code).toBe('uncertain_operations');
    const base = turn(provider, 'forked', 'third', ledger);
    const outcome = await runtime.engine.run({
      ...base,
      work: { ...base.work, allowPriorUnknown: true } as RunInput['work'],
    });
    expect(outcome.outcome).toEqual({ kind: 'completed' });
    expect(ledger.runs, 'the uncertain effect was not run again').toEqual([]);
    const tool = (provider.requests[0]!.messages as { role: string; content?: string }[]).find(
      (message) => message.role === 'tool',
    );
    expect(tool?.content).toContain('the outcome is unknown');
  }, 30_000);
});
