import { describe, expect, it } from 'vitest';
import { ReplayOutputSchema } from '../src/commands/json-output-schemas.ts';
import { echoCall, errorCode, SECRET, startHarness } from './server-harness.ts';

describe('replays over HTTP', () => {
  it('POST /api/replays answers the report of a verify replay: the same facts, no effect, nothing written', async () => {
    await using h = await startHarness();
    h.provider.script(echoCall('call-1', 42), { text: 'done', finishReason: 'stop' });
    const started = await h.api('/api/sessions/s-1/turns', { method: 'POST', json: { message: 'hello' } });
    expect(started.status).toBe(202);
    const { invocation } = (await started.json()) as { invocation: { invocationId: string } };
    await h.waitForFact((fact) => fact.kind === 'invocation_ended');
    const effects = h.effect.started.length;
    const digest = await h.digest();

    const response = await h.api('/api/replays', {
      method: 'POST',
      json: { target: { kind: 'session', sessionId: 's-1' } },
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    const report = ReplayOutputSchema.parse(JSON.parse(text));
    expect(report.mode).toBe('verify');
    expect(report.invocations.map((entry) => [entry.invocationId, entry.status, entry.divergences])).toEqual([
      [invocation.invocationId, 'same', []],
    ]);
    expect(report.invocations[0]!.compared).toBe(7);
    expect(h.effect.started).toHaveLength(effects);
    expect(await h.digest()).toBe(digest);
    expect(text).not.toContain(SECRET);

    const one = await h.api('/api/replays', {
      method: 'POST',
      json: { target: { kind: 'invocation', invocationId: invocation.invocationId }, mode: 'verify' },
    });
    expect(await one.text(), 'the same replay, byte for byte').toBe(text);
  });

  it('is behind the bearer token, refuses a bad body with 400 and an unknown target with 404', async () => {
    await using h = await startHarness();
    const anonymous = await h.api('/api/replays', {
      method: 'POST',
      json: { target: { kind: 'all' } },
      token: null,
    });
    expect(anonymous.status).toBe(401);
    const bad = await h.api('/api/replays', { method: 'POST', json: { target: { kind: 'everything' } } });
    expect(bad.status).toBe(400);
    expect(await errorCode(bad)).toBe('invalid_request');
    const missing = await h.api('/api/replays', {
      method: 'POST',
      json: { target: { kind: 'invocation', invocationId: 'nope' } },
    });
    expect(missing.status).toBe(404);
    expect(await errorCode(missing)).toBe('not_found');
    const empty = await h.api('/api/replays', { method: 'POST', json: { target: { kind: 'all' } } });
    expect(await empty.json()).toEqual({
      mode: 'verify',
      invocations: [],
      summary: { invocations: 0, same: 0, diverged: 0 },
    });
  });
});
