import { rejectionSentence, type ToolCallContext, type ToolExecutor } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { Engine, RunError } from '../src/index.ts';
import { bounds, done, input, Signal, twoEchoCalls } from './support/agent-loop.ts';

/** The seed's effect: it counts, waits for cancellation, and finishes only when released. */
class Effect implements ToolExecutor {
  readonly entered = new Signal();
  readonly cancelled = new Signal();
  readonly release = new Signal();
  count = 0;
  signals: AbortSignal[] = [];

  names() {
    return ['echo'];
  }

  async invoke(_name: string, value: unknown, { signal }: ToolCallContext) {
    this.count += 1;
    this.signals.push(signal);
    this.entered.notify();
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    this.cancelled.notify();
    // This dispatched effect must finish even after cancellation.
    await this.release.notified();
    return value;
  }
}

describe.each(testStores())('engine lifetime on $name', (stores) => {
  it('an aborted caller cancels the worker but keeps admission until the effect is durable', async () => {
    await using store = await stores.create();
    await using provider = await startScriptedProvider();
    provider.script(twoEchoCalls, done, done);
    const effect = new Effect();
    const models = new ModelExecutor({ timeoutMs: 10_000 });
    const code = new CodeExecutor();
    {
      const log = await EventLog.open(store.target);
      const engine = new Engine({ log, models, code });
      const caller = new AbortController();
      const running = engine.run(input(provider, 'aborted', effect), { signal: caller.signal });
      await effect.entered.notified();
      caller.abort();
      await expect(running).rejects.toSatisfy(
        (error) => RunError.isInstance(error) && error.code === 'cancelled',
      );
      await effect.cancelled.notified();
      expect(effect.signals[0], 'the effect gets the run’s own child signal, not the caller’s').not.toBe(
        caller.signal,
      );

      const held = await log.prefix(bounds);
      expect(held.events.at(-1)!.event.fact.kind).toBe('tool_dispatched');
      expect(held.projectInvocation('invocation-aborted').terminal).toBeUndefined();
      const blocked = await engine.run(input(provider, 'blocked', effect)).catch((error: unknown) => error);
      expect(RunError.isInstance(blocked) && blocked.code).toBe('busy');
      expect(
        (await log.prefix(bounds)).highWater,
        'refused admission and caller abort must not seal a live effect',
      ).toBe(held.highWater);

      effect.release.notify();
      // The worker is detached; retry admission until its drain has completed.
      for (;;) {
        const result = await engine.run(input(provider, 'next', effect)).catch((error: unknown) => error);
        if (RunError.isInstance(result) && result.code === 'busy') {
          await new Promise((resolve) => setImmediate(resolve));
          continue;
        }
        expect(result).toMatchObject({ outcome: { kind: 'completed' } });
        break;
      }
      const settled = await log.prefix(bounds);
      const aborted = settled.events.filter(
        (stored) => stored.event.invocation.invocationId === 'invocation-aborted',
      );
      const boundaries = aborted.filter((stored) => stored.event.fact.kind !== 'model_observed');
      for (const observation of aborted.filter((stored) => stored.event.fact.kind === 'model_observed')) {
        expect(
          boundaries[1]!.sequence < observation.sequence && observation.sequence < boundaries[2]!.sequence,
        ).toBe(true);
      }
      expect(boundaries.map((stored) => stored.event.fact.kind).join(',')).toBe(
        'invocation_opened,model_requested,model_completed,tool_dispatched,tool_settled,tool_rejected,invocation_ended',
      );
      const dispatched = boundaries[3]!.event.fact;
      if (dispatched.kind !== 'tool_dispatched' || dispatched.call.origin.kind !== 'provider') {
        throw new Error('direct tool calls must preserve their provider step');
      }
      const stepId = dispatched.call.origin.stepId;
      expect(boundaries[4]!.event.fact).toMatchObject({
        kind: 'tool_settled',
        operationId: dispatched.operationId,
        outcome: { kind: 'succeeded' },
      });
      expect((await log.resolveToolResult('session', boundaries[4]!.event.id)).json()).toEqual({ value: 42 });
      expect(boundaries[5]!.event.fact).toEqual({
        kind: 'tool_rejected',
        operationId: `${stepId}:call-2`,
        call: { kind: 'provider', stepId, callId: 'call-2' },
        name: 'echo',
        input: { value: 43 },
        reason: { kind: 'cancelled' },
      });
      expect(boundaries[6]!.event.fact).toEqual({
        kind: 'invocation_ended',
        outcome: { kind: 'cancelled', source: 'runtime_cancellation' },
      });
      const nextOpening = settled.events.find(
        (stored) => stored.event.invocation.invocationId === 'invocation-next',
      )!;
      expect(boundaries[6]!.sequence).toBeLessThan(nextOpening.sequence);
      await engine.drain();
      await log.close();
    }
    {
      // Reopen to verify durable, usable history without effect replay.
      const log = await EventLog.open(store.target);
      const engine = new Engine({ log, models, code });
      await engine.run(input(provider, 'reopened', effect));
      await engine.drain();
      await log.close();
    }
    expect(effect.count, 'a committed effect is never replayed').toBe(1);
    const requests = provider.requests;
    expect(requests).toHaveLength(3);
    for (const [index, suffix] of [
      [1, 'next'],
      [2, 'reopened'],
    ] as const) {
      const messages = requests[index]!.messages as Record<string, unknown>[];
      expect(messages.at(-1)).toEqual({ role: 'user', content: `question ${suffix}` });
      const results = messages.filter((message) => message.role === 'tool');
      expect(results).toHaveLength(2);
      expect(results[0]!.tool_call_id).toBe('call-1');
      expect(results[1]!.tool_call_id).toBe('call-2');
      expect(results[1]!.content).toContain(rejectionSentence({ kind: 'cancelled' }));
      expect(JSON.parse(results[0]!.content as string)).toEqual({ value: 42 });
    }
    await code.close();
  });
});
