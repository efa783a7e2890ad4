import { describe, expect, it } from 'vitest';
import { VerifyOutputSchema } from '../src/index.ts';
import { errorCode, startHarness } from './server-harness.ts';

describe('GET /api/verify', () => {
  it('gives verify --json’s report: the head, anchors that hold, and the break an anchor past the end makes; refuses malformed queries', async () => {
    await using h = await startHarness();
    h.provider.script({ text: 'hello' });
    const started = await h.api('/api/sessions/s-verify/turns', { method: 'POST', json: { message: 'hi' } });
    expect(started.status).toBe(202);
    await h.waitForFact((fact) => fact.kind === 'invocation_ended');
    const events = await h.events();
    const head = { sequence: events.at(-1)!.sequence, digest: await h.digest() };

    const plain = await h.api('/api/verify');
    expect(plain.status).toBe(200);
    expect(VerifyOutputSchema.parse(await plain.json())).toEqual({
      ok: true,
      events: events.length,
      head,
      anchors: [],
      broken: null,
    });

    const anchor = `${head.sequence}:${head.digest}`;
    const held = await h.api(`/api/verify?anchor=${encodeURIComponent(anchor)}`);
    expect(await held.json()).toMatchObject({ ok: true, anchors: [head] });

    const beyond = `${head.sequence + 5}:${head.digest}`;
    const cut = await h.api(
      `/api/verify?anchor=${encodeURIComponent(anchor)}&anchor=${encodeURIComponent(beyond)}`,
    );
    expect(cut.status).toBe(200);
    expect(await cut.json()).toMatchObject({
      ok: false,
      head,
      broken: { sequence: head.sequence + 5, reason: expect.stringContaining('events were removed') },
    });

    for (const query of ['anchor=12', `anchor=0:${head.digest}`, 'anchor=1:sha256:xyz', 'after=3']) {
      const refused = await h.api(`/api/verify?${query}`);
      expect(refused.status, query).toBe(400);
      expect(await errorCode(refused), query).toBe('invalid_request');
    }
    const anonymous = await h.api('/api/verify', { token: null });
    expect(anonymous.status).toBe(401);
  });
});
