import type { HandoffIntent, HandoffPause } from '@factum/agent-facts';
import { describe, expect, it } from 'vitest';
import { echoCall, errorCode, startHarness } from './server-harness.ts';

function intent(id: string): HandoffIntent {
  return {
    handoffId: id,
    hostEpoch: 'host-a',
    rootRunId: 'run-root',
    successorRunId: `run-${id}`,
    successorInvocationId: `invocation-${id}`,
    claimId: `claim-${id}`,
  };
}

async function startTurn(h: Awaited<ReturnType<typeof startHarness>>, session: string): Promise<string> {
  const response = await h.api(`/api/sessions/${session}/turns`, {
    method: 'POST',
    json: { message: 'work' },
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { invocation: { invocationId: string } }).invocation.invocationId;
}

describe('handoffs over HTTP', () => {
  it('a reserved handoff answers at a safe point with its preview; release lets the run go on, commit seals it', async () => {
    await using h = await startHarness();
    h.provider.script(echoCall('call-1', 1, true), echoCall('call-2', 2, true), { text: 'unused' });
    const id = await startTurn(h, 's-handoff');
    await h.provider.requestArrived(0);

    const first = h.api(`/api/invocations/${id}/handoff`, {
      method: 'POST',
      json: { intent: intent('one') },
    });
    h.provider.release(0);
    const reserved = await first;
    expect(reserved.status).toBe(200);
    const held = (await reserved.json()) as { preview: HandoffPause };
    expect(held.preview.intent).toEqual(intent('one'));
    expect(h.effect.started, 'the safe point comes after the step’s tool settled').toHaveLength(1);
    const second = await h.api(`/api/invocations/${id}/handoff`, {
      method: 'POST',
      json: { intent: intent('two') },
    });
    expect(second.status, 'one reservation at a time').toBe(409);
    expect(await errorCode(second)).toBe('handoff_unavailable');
    const released = await h.api(`/api/invocations/${id}/handoff/release`, { method: 'POST' });
    expect(released.status).toBe(200);

    await h.provider.requestArrived(1);
    const next = h.api(`/api/invocations/${id}/handoff`, { method: 'POST', json: { intent: intent('two') } });
    h.provider.release(1);
    const { preview } = (await (await next).json()) as { preview: HandoffPause };
    const committed = await h.api(`/api/invocations/${id}/handoff/commit`, { method: 'POST', json: {} });
    expect(committed.status).toBe(200);
    const { pause } = (await committed.json()) as { pause: HandoffPause };
    expect(pause, 'the receipt equals the preview').toEqual(preview);
    const ended = await h.waitForFact((fact) => fact.kind === 'invocation_ended');
    expect(ended.event.fact).toEqual({
      kind: 'invocation_ended',
      outcome: { kind: 'handoff_paused', pause },
    });
    expect(h.provider.requests, 'no model request follows the committed hold').toHaveLength(2);

    await h.server.registry.drained();
    const before = await h.digest();
    const sealed = await h.api('/api/sessions/s-handoff/turns', {
      method: 'POST',
      json: { message: 'more' },
    });
    expect(sealed.status).toBe(409);
    expect(await errorCode(sealed), 'the paused turn still owns its session').toBe('sealed');
    const stale = await h.api(`/api/invocations/${id}/handoff/commit`, { method: 'POST' });
    expect(stale.status).toBe(409);
    expect(await h.digest(), 'refusals write nothing').toBe(before);
  });

  it('a handoff that reaches no safe point in time answers 504 and is withdrawn, so the run finishes', async () => {
    await using h = await startHarness({ handoff: { readyMs: 150 } });
    h.provider.script({ text: 'slow answer', finishReason: 'stop', hold: true });
    const id = await startTurn(h, 's-timeout');
    await h.provider.requestArrived(0);
    const response = await h.api(`/api/invocations/${id}/handoff`, {
      method: 'POST',
      json: { intent: intent('late') },
    });
    expect(response.status).toBe(504);
    expect(await errorCode(response)).toBe('handoff_timeout');
    const nothingHeld = await h.api(`/api/invocations/${id}/handoff/commit`, { method: 'POST' });
    expect(await errorCode(nothingHeld)).toBe('no_held_handoff');
    h.provider.release(0);
    const ended = await h.waitForFact((fact) => fact.kind === 'invocation_ended');
    expect(ended.event.fact).toEqual({ kind: 'invocation_ended', outcome: { kind: 'completed' } });
  });

  it('a held handoff is a lease: a client that never decides does not pin the run', async () => {
    await using h = await startHarness({ handoff: { holdMs: 100 } });
    h.provider.script(echoCall('call-1', 1, true), { text: 'done', finishReason: 'stop' });
    const id = await startTurn(h, 's-lease');
    await h.provider.requestArrived(0);
    const reserve = h.api(`/api/invocations/${id}/handoff`, {
      method: 'POST',
      json: { intent: intent('idle') },
    });
    h.provider.release(0);
    expect((await reserve).status).toBe(200);
    const ended = await h.waitForFact((fact) => fact.kind === 'invocation_ended');
    expect(ended.event.fact, 'released when the lease ran out').toEqual({
      kind: 'invocation_ended',
      outcome: { kind: 'completed' },
    });
  });
});
