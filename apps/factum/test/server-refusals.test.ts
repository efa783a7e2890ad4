import { describe, expect, it } from 'vitest';
import { errorCode, type Harness, startHarness, TOKEN } from './server-harness.ts';

type Refusal = {
  readonly name: string;
  readonly send: (h: Harness) => Promise<Response>;
  readonly status: number;
  readonly code: string;
  readonly path?: string;
};

const turns = '/api/sessions/s-refuse/turns';
const post = (json: unknown) => ({ method: 'POST', json });

const refusals: Refusal[] = [
  {
    name: 'no bearer token',
    send: (h) => h.api(turns, { ...post({ message: 'x' }), token: null }),
    status: 401,
    code: 'unauthorized',
  },
  {
    name: 'a wrong token',
    send: (h) => h.api(turns, { ...post({ message: 'x' }), token: `${TOKEN}x` }),
    status: 401,
    code: 'unauthorized',
  },
  {
    name: 'a token in the query of a route other than the stream',
    send: (h) => h.api(`${turns}?token=${TOKEN}`, { ...post({ message: 'x' }), token: null }),
    status: 401,
    code: 'unauthorized',
  },
  {
    name: 'a body that is not JSON',
    send: (h) =>
      h.api(turns, { method: 'POST', body: '{"message": ', headers: { 'content-type': 'application/json' } }),
    status: 400,
    code: 'malformed_json',
  },
  {
    name: 'a missing message',
    send: (h) => h.api(turns, post({})),
    status: 400,
    code: 'invalid_request',
    path: 'message',
  },
  {
    name: 'an empty message',
    send: (h) => h.api(turns, post({ message: '' })),
    status: 400,
    code: 'invalid_request',
    path: 'message',
  },
  {
    name: 'an unknown tool mode',
    send: (h) => h.api(turns, post({ message: 'x', toolMode: 'shell' })),
    status: 400,
    code: 'invalid_request',
    path: 'toolMode',
  },
  {
    name: 'an unknown field',
    send: (h) => h.api(turns, post({ message: 'x', apiKey: 'sneaky' })),
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'a session id past the id bounds',
    send: (h) => h.api(`/api/sessions/${'s'.repeat(300)}/turns`, post({ message: 'x' })),
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'a body over the limit (content-length)',
    send: (h) => h.api(turns, post({ message: 'x'.repeat(5_000) })),
    status: 413,
    code: 'payload_too_large',
  },
  {
    name: 'a body over the limit (chunked, no length)',
    send: (h) =>
      h.api(turns, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(`{"message":"${'y'.repeat(3_000)}`));
            controller.enqueue(new TextEncoder().encode(`${'y'.repeat(3_000)}"}`));
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit),
    status: 413,
    code: 'payload_too_large',
  },
  {
    name: 'a malformed handoff intent',
    send: (h) => h.api('/api/invocations/i-1/handoff', post({ intent: { handoffId: 'h' } })),
    status: 400,
    code: 'invalid_request',
    path: 'intent.claimId',
  },
  {
    name: 'a handoff for an unknown invocation',
    send: (h) =>
      h.api(
        '/api/invocations/i-unknown/handoff',
        post({
          intent: {
            handoffId: 'h',
            hostEpoch: 'e',
            rootRunId: 'r',
            successorRunId: 's',
            successorInvocationId: 'i',
            claimId: 'c',
          },
        }),
      ),
    status: 404,
    code: 'not_found',
  },
  {
    name: 'a cancel with a body',
    send: (h) => h.api('/api/invocations/i-1/cancel', post({ now: true })),
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'a page limit of 0',
    send: (h) => h.api('/api/events?limit=0'),
    status: 400,
    code: 'invalid_request',
    path: 'limit',
  },
  {
    name: 'a negative cursor',
    send: (h) => h.api('/api/events?after=-1'),
    status: 400,
    code: 'invalid_request',
    path: 'after',
  },
  {
    name: 'a Last-Event-ID that is not a sequence',
    send: (h) => h.api('/api/sessions/s-1/events/stream', { headers: { 'last-event-id': 'abc' } }),
    status: 400,
    code: 'invalid_request',
  },
  { name: 'an unknown route', send: (h) => h.api('/api/nothing-here'), status: 404, code: 'not_found' },
];

describe('refused requests', () => {
  it('each malformed, unauthenticated or oversized request is refused with its status and writes nothing', async () => {
    await using h = await startHarness({ maxBodyBytes: 4_096 });
    h.provider.script({ text: 'first', finishReason: 'stop' });
    await h.api('/api/sessions/s-refuse/turns', { method: 'POST', json: { message: 'seed the log' } });
    await h.waitForFact((fact) => fact.kind === 'invocation_ended');
    await h.server.registry.drained();
    const before = await h.digest();
    for (const refusal of refusals) {
      const response = await refusal.send(h);
      expect(response.status, refusal.name).toBe(refusal.status);
      const body = (await response.json()) as { error: { code: string; message: string; path?: string } };
      expect(body.error.code, refusal.name).toBe(refusal.code);
      expect(body.error.message.length, refusal.name).toBeGreaterThan(0);
      if (refusal.path !== undefined) expect(body.error.path, refusal.name).toBe(refusal.path);
      if (refusal.status === 401) expect(response.headers.get('www-authenticate')).toContain('Bearer');
      expect(await h.digest(), `${refusal.name} wrote nothing`).toBe(before);
    }
    expect(h.provider.requests, 'no refused turn reached the model').toHaveLength(1);
  });

  it('a turn on a server without a provider is refused with 503 and writes nothing', async () => {
    await using h = await startHarness({ withProvider: false });
    const before = await h.digest();
    const response = await h.api(turns, { method: 'POST', json: { message: 'x' } });
    expect(response.status).toBe(503);
    expect(await errorCode(response)).toBe('no_provider');
    expect(await h.digest()).toBe(before);
  });
});
