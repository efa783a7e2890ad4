import { EventWrite, type Fact, type Invocation, RuntimeEvent } from '@factum/agent-facts';
import { recoverInvocations } from '@factum/event-log';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './server-harness.ts';

/** Named SSE events of a session's stream, parsed by the same library clients use. */
async function collectEvents(h: Harness, sessionId: string, signal: AbortSignal) {
  const events: EventSourceMessage[] = [];
  const response = await h.api(`/api/sessions/${sessionId}/events/stream`, { signal });
  const parser = createParser({ onEvent: (message) => events.push(message) });
  const reading = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>)
        parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // aborted by the test
    }
  })();
  return { events, reading };
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${what} did not happen in time`);
}

const errorCode = async (response: Response) =>
  ((await response.json()) as { error: { code: string } }).error.code;

describe('approvals over HTTP', () => {
  it('lists, refuses bad or conflicting decisions without writing, approves once, continues the run, streams events', async () => {
    await using h = await startHarness({ requireApproval: ['echo'] });
    h.provider.script(
      { toolCalls: [{ id: 'call-1', name: 'echo', arguments: { value: 7 } }], finishReason: 'tool_calls' },
      { text: 'echoed 7', finishReason: 'stop' },
    );
    const aborting = new AbortController();
    const stream = await collectEvents(h, 's-approve', aborting.signal);
    expect(
      (await h.api('/api/sessions/s-approve/turns', { method: 'POST', json: { message: 'echo 7' } })).status,
    ).toBe(202);
    await h.waitForFact(
      (fact) => fact.kind === 'invocation_ended' && fact.outcome.kind === 'approval_pending',
    );
    await until(() => stream.events.some((event) => event.event === 'approval_requested'), 'the SSE event');
    expect(h.effect.started, 'nothing ran before the decision').toEqual([]);

    expect((await h.api('/api/approvals', { token: null })).status).toBe(401);
    const listed = (await (await h.api('/api/approvals')).json()) as {
      approvals: { operationId: string; tool: string; input: unknown; inputDigest: string; decision: null }[];
    };
    expect(listed.approvals).toHaveLength(1);
    const [approval] = listed.approvals;
    expect(approval).toMatchObject({ tool: 'echo', input: { value: 7 }, decision: null });
    const sessions = (await (await h.api('/api/sessions')).json()) as { sessions: { status: string }[] };
    expect(sessions.sessions[0]?.status).toBe('awaiting_approval');

    const path = `/api/operations/${encodeURIComponent(approval!.operationId)}/decision`;
    const before = await h.digest();
    const unauthorized = await h.api(path, {
      method: 'POST',
      json: { decision: 'approve' },
      token: 'wrong-token-wrong-token',
    });
    expect(unauthorized.status).toBe(401);
    const bad = await h.api(path, { method: 'POST', json: { decision: 'maybe' } });
    expect(bad.status).toBe(400);
    expect(await errorCode(bad)).toBe('invalid_request');
    const otherInput = await h.api(path, {
      method: 'POST',
      json: { decision: 'approve', inputDigest: `sha256:${'0'.repeat(64)}` },
    });
    expect(otherInput.status).toBe(409);
    expect(await errorCode(otherInput)).toBe('approval_input_mismatch');
    const unknown = await h.api('/api/operations/no-such-op/decision', {
      method: 'POST',
      json: { decision: 'deny' },
    });
    expect(unknown.status).toBe(404);
    expect(await errorCode(unknown)).toBe('approval_unknown');
    expect(await h.digest(), 'refusals write nothing').toBe(before);

    const approved = await h.api(path, {
      method: 'POST',
      json: { decision: 'approve', note: 'fine', inputDigest: approval!.inputDigest },
    });
    expect(approved.status).toBe(200);
    const body = (await approved.json()) as { continuation: { invocation: Invocation } | null };
    expect(body.continuation?.invocation.sessionId).toBe('s-approve');
    await h.waitForFact((fact) => fact.kind === 'invocation_ended' && fact.outcome.kind === 'completed');
    expect(h.effect.started, 'the approved input ran once').toEqual([JSON.stringify({ value: 7 })]);
    await until(() => stream.events.some((event) => event.event === 'approval_decided'), 'the decided event');
    const decided = stream.events.find((event) => event.event === 'approval_decided')!;
    expect(JSON.parse(decided.data)).toMatchObject({
      event: { fact: { kind: 'approval_decided', decision: 'approved', by: 'web', note: 'fine' } },
    });

    const settled = await h.digest();
    const twice = await h.api(path, { method: 'POST', json: { decision: 'deny' } });
    expect(twice.status).toBe(409);
    const notUncertain = await h.api(
      `/api/operations/${encodeURIComponent(approval!.operationId)}/resolution`,
      {
        method: 'POST',
        json: { outcome: 'not_run', note: 'it ran' },
      },
    );
    expect(notUncertain.status).toBe(409);
    expect(await errorCode(notUncertain)).toBe('not_uncertain');
    expect(await h.digest(), 'conflicts write nothing').toBe(settled);
    aborting.abort();
    await stream.reading;
  }, 60_000);

  it('resolves an uncertain operation by hand: 400 without a note, then recorded as the operator’s', async () => {
    await using h = await startHarness();
    const invocation: Invocation = { sessionId: 's-crash', turnId: 't', runId: 'r', invocationId: 'i-crash' };
    const facts: Fact[] = [
      {
        kind: 'invocation_opened',
        configuration: { cwd: '/workspace', toolMode: 'direct' },
        input: { kind: 'message', content: 'charge', sourceMessages: [] },
      },
      {
        kind: 'tool_dispatched',
        operationId: 'op-charge',
        call: {
          id: 'c',
          name: 'charge_card',
          input: { amount: 42 },
          origin: { kind: 'provider', stepId: 's1' },
        },
      },
    ];
    for (const fact of facts)
      await h.runtime.log.append(EventWrite.plain(RuntimeEvent.create(invocation, fact)));
    await recoverInvocations(h.runtime.log);
    const path = '/api/operations/op-charge/resolution';
    const before = await h.digest();
    const noNote = await h.api(path, { method: 'POST', json: { outcome: 'succeeded' } });
    expect(noNote.status).toBe(400);
    const resultOnFailure = await h.api(path, {
      method: 'POST',
      json: { outcome: 'failed', result: 'x', note: 'n' },
    });
    expect(resultOnFailure.status).toBe(400);
    expect(await h.digest()).toBe(before);
    const resolved = await h.api(path, {
      method: 'POST',
      json: { outcome: 'succeeded', result: 'charged 42', note: 'the bank statement shows it' },
    });
    expect(resolved.status).toBe(200);
    const reconciled = await h.waitForFact((fact) => fact.kind === 'tool_reconciled');
    expect(reconciled.event.fact).toMatchObject({
      policy: 'operator',
      by: 'web',
      note: 'the bank statement shows it',
      decision: { kind: 'succeeded' },
    });
  }, 60_000);
});
