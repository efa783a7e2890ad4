import type { StoredEvent } from '@factum/event-log';
import { describe, expect, it } from 'vitest';
import { echoCall, errorCode, kinds, SECRET, startHarness } from './server-harness.ts';

type Page = { events: StoredEvent[]; nextAfter: number; more: boolean };

describe('turns over HTTP', () => {
  it('a turn started over HTTP runs to its end, and its facts page through /api/events in order', async () => {
    await using h = await startHarness();
    h.provider.script(echoCall('call-1', 42), { text: 'done', finishReason: 'stop' });
    const started = await h.api('/api/sessions/s-1/turns', { method: 'POST', json: { message: 'hello' } });
    expect(started.status).toBe(202);
    const { invocation } = (await started.json()) as {
      invocation: { sessionId: string; invocationId: string };
    };
    expect(invocation.sessionId).toBe('s-1');
    await h.waitForFact((fact) => fact.kind === 'invocation_ended');

    const paged: StoredEvent[] = [];
    let after = 0;
    for (let pages = 0; pages < 50; pages += 1) {
      const response = await h.api(`/api/events?session=s-1&limit=3&after=${after}`);
      expect(response.status).toBe(200);
      const page = (await response.json()) as Page;
      expect(page.events.length).toBeLessThanOrEqual(3);
      paged.push(...page.events);
      after = page.nextAfter;
      if (!page.more) break;
    }
    const logged = await h.events();
    expect(paged, 'paging returns exactly the log, in order').toEqual(JSON.parse(JSON.stringify(logged)));
    const facts = kinds(paged);
    expect(facts[0]).toBe('invocation_opened');
    expect(facts).toContain('tool_dispatched');
    expect(facts.indexOf('tool_settled')).toBeGreaterThan(facts.indexOf('tool_dispatched'));
    expect(paged.at(-1)?.event.fact).toEqual({ kind: 'invocation_ended', outcome: { kind: 'completed' } });
    expect(JSON.stringify(logged), 'the provider key never reaches the log').not.toContain(SECRET);

    const sessions = (await (await h.api('/api/sessions')).json()) as {
      sessions: { id: string; status: string; events: number; title: string }[];
    };
    expect(sessions.sessions).toEqual([
      expect.objectContaining({ id: 's-1', status: 'completed', events: logged.length, title: 'hello' }),
    ]);
    const detail = (await (await h.api('/api/sessions/s-1')).json()) as { invocations: unknown[] };
    expect(detail.invocations).toHaveLength(1);
    expect(detail.invocations[0]).toMatchObject({ status: 'completed', unsettledOperations: 0, live: false });
    const recovery = await (await h.api(`/api/invocations/${invocation.invocationId}/recovery`)).json();
    expect(recovery).toMatchObject({
      uncertainOperations: [],
      undispatchedCalls: [],
      ended: true,
      live: false,
    });
    const all = JSON.stringify([sessions, detail, recovery]);
    expect(all, 'no response carries the provider key').not.toContain(SECRET);
  });

  it('cancelling over HTTP lets the dispatched effect settle and rejects the calls that had not started', async () => {
    await using h = await startHarness();
    h.effect.hold();
    h.provider.script({
      toolCalls: [
        { id: 'call-1', name: 'echo', arguments: { value: 1 } },
        { id: 'call-2', name: 'echo', arguments: { value: 2 } },
      ],
      finishReason: 'tool_calls',
    });
    const started = await h.api('/api/sessions/s-cancel/turns', { method: 'POST', json: { message: 'go' } });
    const { invocation } = (await started.json()) as { invocation: { invocationId: string } };
    await h.waitForFact((fact) => fact.kind === 'tool_dispatched');
    const busy = await h.api('/api/sessions/s-cancel/turns', { method: 'POST', json: { message: 'again' } });
    expect(busy.status, 'one live invocation per session').toBe(409);
    expect(await errorCode(busy)).toBe('busy');

    const cancel = await h.api(`/api/invocations/${invocation.invocationId}/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(202);
    h.effect.release();
    const ended = await h.waitForFact((fact) => fact.kind === 'invocation_ended');
    expect(ended.event.fact).toEqual({
      kind: 'invocation_ended',
      outcome: { kind: 'cancelled', source: 'runtime_cancellation' },
    });
    const facts = (await h.events()).map((stored) => stored.event.fact);
    expect(facts.filter((fact) => fact.kind === 'tool_settled')).toHaveLength(1);
    expect(facts.find((fact) => fact.kind === 'tool_rejected')).toMatchObject({
      name: 'echo',
      reason: { kind: 'cancelled' },
    });
    expect(h.effect.started, 'the rejected call never ran').toHaveLength(1);

    await h.server.registry.drained();
    const again = await h.api(`/api/invocations/${invocation.invocationId}/cancel`, { method: 'POST' });
    expect(again.status).toBe(409);
    expect(await errorCode(again)).toBe('not_running');
    const unknown = await h.api('/api/invocations/invocation-nope/cancel', { method: 'POST' });
    expect(unknown.status).toBe(404);
  });

  it('a turn keeps running when the client that started it disconnects', async () => {
    await using h = await startHarness();
    h.provider.script({ text: 'still here', finishReason: 'stop', hold: true });
    const controller = new AbortController();
    const started = await h.api('/api/sessions/s-gone/turns', {
      method: 'POST',
      json: { message: 'hi' },
      signal: controller.signal,
    });
    expect(started.status).toBe(202);
    await h.provider.requestArrived(0);
    controller.abort();
    h.provider.release(0);
    const ended = await h.waitForFact((fact) => fact.kind === 'invocation_ended');
    expect(ended.event.fact).toEqual({ kind: 'invocation_ended', outcome: { kind: 'completed' } });
  });
});
