import { join } from 'node:path';
import type { ToolExecutor } from '@factum/agent-facts';
import type { EventLog } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { type ScriptedProvider, startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { RunError, type RunInput, recordedOutcome } from '../src/index.ts';
import { bounds, done, input, oneCall, temporaryDirectory } from './support/agent-loop.ts';
import { effectInto, effects } from './support/approvals.ts';
import { commitRecordingLog } from './support/commit-log.ts';

/** A turn of session `session` with its own invocation id, asking `message`. */
function turn(
  provider: ScriptedProvider,
  suffix: string,
  effect: ToolExecutor,
  message = 'send the invoice to Bob',
): RunInput {
  const base = input(provider, suffix, effect);
  return { ...base, work: { ...base.work, kind: 'message', message } } as RunInput;
}

async function eventCount(log: EventLog): Promise<number> {
  return (await log.read({ limit: 10_000 })).length;
}

describe.each(testStores())('idempotent submission on $name', (stores) => {
  async function setup() {
    const store = await stores.create();
    const dir = temporaryDirectory();
    const { log, engine } = await commitRecordingLog(store.target);
    const ledger = join(dir.path, 'ledger');
    return {
      log,
      engine,
      ledger,
      effect: effectInto(ledger) as ToolExecutor,
      async [Symbol.asyncDispose]() {
        await log.close();
        dir[Symbol.dispose]();
        await store[Symbol.asyncDispose]();
      },
    };
  }

  it('a retried submission of an ended turn gets the first run back: same invocation, same outcome and answer, no model call, no effect', async () => {
    await using s = await setup();
    await using engine = s.engine('host-a');
    await using provider = await startScriptedProvider();
    provider.script(oneCall('echo'), { ...done, text: ['invoice ', 'sent'] });
    const first = await engine.run(turn(provider, 'one', s.effect), { idempotencyKey: 'k-1' });
    expect(first.outcome).toEqual({ kind: 'completed' });
    expect(first.answer).toEqual({
      stepId: 'invocation-one/2',
      parts: [{ kind: 'text', text: 'invoice sent' }],
      text: 'invoice sent',
      refused: false,
    });
    const written = await eventCount(s.log);

    const running = await engine.start(turn(provider, 'two', s.effect), { idempotencyKey: 'k-1' });
    expect(running.resubmitted).toBe(true);
    expect(running.recorded).toEqual(first);
    expect(running.invocation).toEqual(first.invocation);
    expect(await running.wait()).toEqual(first);
    expect(await engine.run(turn(provider, 'three', s.effect), { idempotencyKey: 'k-1' })).toEqual(first);
    expect(provider.requests).toHaveLength(2);
    expect(effects(s.ledger)).toHaveLength(1);
    expect(await eventCount(s.log)).toBe(written);
    // The log's events say the same as the live run did.
    expect(recordedOutcome(await s.log.invocationEvents(first.invocation, bounds))).toEqual(first);
  }, 60_000);

  it('three submissions with one key on one host at once: one run, three callers with its outcome', async () => {
    await using s = await setup();
    await using engine = s.engine('host-a');
    await using provider = await startScriptedProvider();
    const [reply] = provider.script({ ...done, hold: true });
    const starts = ['a', 'b', 'c'].map((suffix) =>
      engine.start(turn(provider, suffix, s.effect), { idempotencyKey: 'k-1' }),
    );
    const running = await Promise.all(starts);
    expect(new Set(running.map((one) => one.invocation.invocationId)).size).toBe(1);
    expect(running.filter((one) => !one.resubmitted)).toHaveLength(1);
    expect(running.map((one) => one.recorded)).toEqual([undefined, undefined, undefined]);
    await reply!.arrived();
    reply!.release();
    const outcomes = await Promise.all(running.map((one) => one.wait()));
    expect(outcomes[1]).toEqual(outcomes[0]);
    expect(outcomes[2]).toEqual(outcomes[0]);
    expect(provider.requests).toHaveLength(1);
    const opened = (await s.log.read({ limit: 100 })).filter(
      (e) => e.event.fact.kind === 'invocation_opened',
    );
    expect(opened).toHaveLength(1);
    await engine.drain();
  }, 60_000);

  it('the same key with another message is idempotency_conflict, live or ended, and writes nothing', async () => {
    await using s = await setup();
    await using engine = s.engine('host-a');
    await using provider = await startScriptedProvider();
    const [reply] = provider.script({ ...done, hold: true });
    const first = await engine.start(turn(provider, 'one', s.effect), { idempotencyKey: 'k-1' });
    const written = await eventCount(s.log);
    const conflict = (suffix: string) =>
      engine.start(turn(provider, suffix, s.effect, 'send the invoice to Mallory'), {
        idempotencyKey: 'k-1',
      });
    await expect(conflict('two')).rejects.toMatchObject({ code: 'idempotency_conflict' });
    await reply!.arrived();
    reply!.release();
    await first.wait();
    const ended = await eventCount(s.log);
    await expect(conflict('three')).rejects.toSatisfy(
      (error: unknown) => RunError.isInstance(error) && error.code === 'idempotency_conflict',
    );
    expect(await eventCount(s.log)).toBe(ended);
    expect(ended).toBeGreaterThan(written);
    expect(provider.requests).toHaveLength(1);
  }, 60_000);

  it('a malformed key is invalid_input with nothing written', async () => {
    await using s = await setup();
    await using engine = s.engine('host-a');
    await using provider = await startScriptedProvider();
    for (const key of ['', 'a b', 'x'.repeat(256), 'new\nline']) {
      await expect(
        engine.start(turn(provider, 'one', s.effect), { idempotencyKey: key }),
      ).rejects.toMatchObject({
        code: 'invalid_input',
      });
    }
    expect(await eventCount(s.log)).toBe(0);
    expect(provider.requests).toHaveLength(0);
  }, 60_000);

  it('a run started again with the same invocation id is duplicate_invocation, not invalid_input', async () => {
    await using s = await setup();
    await using engine = s.engine('host-a');
    await using provider = await startScriptedProvider();
    provider.script(done);
    await engine.run(turn(provider, 'one', s.effect));
    const written = await eventCount(s.log);
    await expect(engine.run(turn(provider, 'one', s.effect))).rejects.toMatchObject({
      code: 'duplicate_invocation',
    });
    expect(await eventCount(s.log)).toBe(written);
  }, 60_000);

  it("the answer carries the model's refusal apart from its text, live and recorded alike", async () => {
    await using s = await setup();
    await using engine = s.engine('host-a');
    await using provider = await startScriptedProvider();
    provider.script({ refusal: 'I will not send that', finishReason: 'stop' });
    const outcome = await engine.run(turn(provider, 'one', s.effect), { idempotencyKey: 'k-1' });
    expect(outcome.answer).toMatchObject({
      parts: [{ kind: 'refusal', text: 'I will not send that' }],
      text: '',
      refused: true,
    });
    expect(await engine.run(turn(provider, 'two', s.effect), { idempotencyKey: 'k-1' })).toEqual(outcome);
  }, 60_000);
});
