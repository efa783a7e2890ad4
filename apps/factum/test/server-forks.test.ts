import { EventWrite, type Fact, RuntimeEvent } from '@factum/agent-facts';
import { describe, expect, it } from 'vitest';
import { echoCall, errorCode, kinds, startHarness } from './server-harness.ts';

describe('forks over HTTP', () => {
  it('POST /sessions/:id/forks forks at an invocation and runs the message as the fork’s first turn; the prefix’s effect runs once', async () => {
    await using h = await startHarness();
    h.provider.script(
      echoCall('call-1', 42),
      { text: 'done', finishReason: 'stop' },
      { text: 'forked', finishReason: 'stop' },
    );
    const started = await h.api('/api/sessions/s-1/turns', { method: 'POST', json: { message: 'hello' } });
    const { invocation } = (await started.json()) as { invocation: { invocationId: string } };
    await h.waitForFact((fact) => fact.kind === 'invocation_ended');

    const response = await h.api('/api/sessions/s-1/forks', {
      method: 'POST',
      json: { at: invocation.invocationId, message: 'and differently?' },
    });
    expect(response.status).toBe(201);
    const fork = (await response.json()) as {
      session: string;
      source: { invocation: { sessionId: string; invocationId: string } };
      invocation: { sessionId: string };
    };
    expect(fork.source.invocation).toMatchObject({ sessionId: 's-1', invocationId: invocation.invocationId });
    expect(fork.invocation.sessionId).toBe(fork.session);
    await h.runtime.engine.drain();
    const own = (await h.events()).filter(({ event }) => event.invocation.sessionId === fork.session);
    expect(kinds(own).filter((kind) => kind !== 'model_observed')).toEqual([
      'session_forked',
      'invocation_opened',
      'model_requested',
      'model_completed',
      'invocation_ended',
    ]);
    expect(h.effect.started, 'the echo of the prefix ran once, never in the fork').toEqual(['{"value":42}']);
    const users = (h.provider.requests[2]!.messages as { role: string; content?: unknown }[])
      .filter((message) => message.role === 'user')
      .map((message) => message.content);
    expect(users).toEqual(['hello', 'and differently?']);

    const detail = (await (await h.api(`/api/sessions/${fork.session}`)).json()) as {
      forkedFrom: { source: { invocation: { sessionId: string } } };
      invocations: unknown[];
    };
    expect(detail.forkedFrom.source.invocation.sessionId).toBe('s-1');
    expect(detail.invocations).toHaveLength(1);
  });

  it('a fork without a message is a session with no invocation yet', async () => {
    await using h = await startHarness();
    h.provider.script({ text: 'done', finishReason: 'stop' });
    await h.api('/api/sessions/s-1/turns', { method: 'POST', json: { message: 'hello' } });
    await h.waitForFact((fact) => fact.kind === 'invocation_ended');
    const response = await h.api('/api/sessions/s-1/forks', { method: 'POST', json: {} });
    expect(response.status).toBe(201);
    const { session } = (await response.json()) as { session: string };
    const detail = (await (await h.api(`/api/sessions/${session}`)).json()) as {
      status: string;
      invocations: unknown[];
    };
    expect(detail).toMatchObject({ status: 'open', invocations: [] });
  });

  it('bad bodies, unknown sessions and boundaries, and a missing token are typed refusals with nothing written', async () => {
    await using h = await startHarness();
    h.provider.script({ text: 'done', finishReason: 'stop' });
    await h.api('/api/sessions/s-1/turns', { method: 'POST', json: { message: 'hello' } });
    await h.waitForFact((fact) => fact.kind === 'invocation_ended');
    const before = await h.digest();
    const post = (path: string, json: unknown, token?: null) =>
      h.api(path, { method: 'POST', json, ...(token === null ? { token: null } : {}) });

    const extra = await post('/api/sessions/s-1/forks', { at: 'x', whatever: 1 });
    expect(extra.status).toBe(400);
    expect(await errorCode(extra)).toBe('invalid_request');
    const empty = await post('/api/sessions/s-1/forks', { message: '' });
    expect(empty.status).toBe(400);
    const unknown = await post('/api/sessions/nowhere/forks', {});
    expect(unknown.status).toBe(404);
    expect(await errorCode(unknown)).toBe('unknown_session');
    const boundary = await post('/api/sessions/s-1/forks', { at: 'invocation-none' });
    expect(boundary.status).toBe(409);
    expect(await errorCode(boundary)).toBe('invalid_boundary');
    const anonymous = await post('/api/sessions/s-1/forks', {}, null);
    expect(anonymous.status).toBe(401);
    expect(await h.digest(), 'nothing was written').toBe(before);
  });
  it('a fork whose first turn the engine refuses is still made, and the refusal is told beside it', async () => {
    await using h = await startHarness();
    const at = { sessionId: 's-u', turnId: 't', runId: 'r', invocationId: 'i' };
    const facts: Fact[] = [
      { kind: 'invocation_opened', input: { kind: 'message', content: 'charge', sourceMessages: [] } },
      {
        kind: 'tool_dispatched',
        operationId: 'i/1:c',
        call: { id: 'c', name: 'echo', input: {}, origin: { kind: 'provider', stepId: 'i/1' } },
      },
      { kind: 'invocation_ended', outcome: { kind: 'failed', error: { code: 'crashed', message: 'gone' } } },
    ];
    for (const fact of facts) await h.runtime.log.append(EventWrite.plain(RuntimeEvent.create(at, fact)));
    const response = await h.api('/api/sessions/s-u/forks', { method: 'POST', json: { message: 'go on' } });
    expect(response.status).toBe(201);
    const body = (await response.json()) as {
      session: string;
      refused: { code: string };
      invocation?: unknown;
    };
    expect(body.refused.code).toBe('uncertain_operations');
    expect(body.invocation).toBeUndefined();
    const own = (await h.events()).filter(({ event }) => event.invocation.sessionId === body.session);
    expect(kinds(own)).toEqual(['session_forked']);
    expect(h.effect.started).toEqual([]);
  });
});
