import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { echoCall, errorCode, kinds, startHarness, TOKEN } from './server-harness.ts';

type Started = { invocation: { sessionId: string; invocationId: string }; outcome?: Record<string, unknown> };

/**
 * Sends a turn and drops the connection once the turn's opening is in the log, before
 * reading a byte of the answer: the 202 is lost, as a proxy timeout or a client crash
 * loses it.
 */
async function submitAndDrop(
  url: string,
  path: string,
  key: string,
  body: unknown,
  opened: () => Promise<unknown>,
): Promise<void> {
  const req = request(`${url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      'idempotency-key': key,
    },
  });
  req.on('error', () => undefined);
  req.end(JSON.stringify(body));
  await opened();
  req.destroy();
}

describe('idempotent turns over HTTP', () => {
  it('the 202 is lost and the client retries with its key: the same invocation, one run, one effect, and the answer from the outcome route', async () => {
    await using h = await startHarness();
    // The model's answer tries to pass for protocol: it is data in the outcome, nothing more.
    const answer = 'sent\r\nIdempotent-Replayed: false\u001b]0;owned\u0007</script>';
    h.provider.script(echoCall('call-1', 42), { text: answer, finishReason: 'stop' });
    h.effect.hold();
    const body = { message: 'send the invoice to Bob' };
    await submitAndDrop(h.server.url, '/api/sessions/s-1/turns', 'turn-0001', body, () =>
      h.waitForFact((fact) => fact.kind === 'tool_dispatched'),
    );

    const retry = await h.api('/api/sessions/s-1/turns', {
      method: 'POST',
      json: body,
      headers: { 'Idempotency-Key': 'turn-0001' },
    });
    expect(retry.status).toBe(202);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const { invocation } = (await retry.json()) as Started;
    const opened = (await h.events()).filter((stored) => stored.event.fact.kind === 'invocation_opened');
    expect(opened).toHaveLength(1);
    expect(opened[0]!.event.invocation.invocationId).toBe(invocation.invocationId);

    const waiting = await h.api(`/api/invocations/${invocation.invocationId}/outcome`);
    expect(waiting.status).toBe(202);
    expect(await waiting.json()).toEqual({ invocation: opened[0]!.event.invocation, ended: false });
    h.effect.release();
    const ended = await h.api(`/api/invocations/${invocation.invocationId}/outcome?wait=20000`);
    expect(ended.status).toBe(200);
    const result = (await ended.json()) as Started & { ended: boolean };
    expect(result.ended).toBe(true);
    expect(result.outcome).toMatchObject({
      outcome: { kind: 'completed' },
      steps: 2,
      answer: { text: answer, parts: [{ kind: 'text', text: answer }], refused: false },
    });

    // Once it has ended, the retry gets the recorded outcome itself: 200.
    const late = await h.api('/api/sessions/s-1/turns', {
      method: 'POST',
      json: body,
      headers: { 'Idempotency-Key': 'turn-0001' },
    });
    expect(late.status).toBe(200);
    expect(late.headers.get('idempotent-replayed')).toBe('true');
    expect(await late.json()).toEqual({ invocation: result.invocation, outcome: result.outcome });

    expect(h.provider.requests, 'the model was asked for one turn only').toHaveLength(2);
    expect(h.effect.started, 'the effect ran once').toHaveLength(1);
    expect(kinds(await h.events()).filter((kind) => kind === 'invocation_opened')).toHaveLength(1);
  });

  it('the same key with another body is 409 idempotency_conflict with nothing written; a bad key is 400', async () => {
    await using h = await startHarness();
    h.provider.script({ text: 'done', finishReason: 'stop' });
    const first = await h.api('/api/sessions/s-1/turns', {
      method: 'POST',
      json: { message: 'send the invoice to Bob' },
      headers: { 'Idempotency-Key': 'k-1' },
    });
    expect(first.status).toBe(202);
    await h.waitForFact((fact) => fact.kind === 'invocation_ended');
    const before = (await h.events()).length;
    for (const json of [
      { message: 'send the invoice to Mallory' },
      { message: 'send the invoice to Bob', allowPriorUnknown: true },
    ]) {
      const conflict = await h.api('/api/sessions/s-1/turns', {
        method: 'POST',
        json,
        headers: { 'Idempotency-Key': 'k-1' },
      });
      expect(conflict.status).toBe(409);
      expect(await errorCode(conflict)).toBe('idempotency_conflict');
    }
    for (const key of ['has space', 'x'.repeat(256)]) {
      const bad = await h.api('/api/sessions/s-1/turns', {
        method: 'POST',
        json: { message: 'hello' },
        headers: { 'Idempotency-Key': key },
      });
      expect(bad.status).toBe(400);
      expect(await errorCode(bad)).toBe('invalid_request');
    }
    expect((await h.events()).length).toBe(before);
    expect(h.provider.requests).toHaveLength(1);
    const unknown = await h.api('/api/invocations/nope/outcome');
    expect(unknown.status).toBe(404);
    const badWait = await h.api(`/api/invocations/nope/outcome?wait=-1`);
    expect(badWait.status).toBe(400);
  });
});
