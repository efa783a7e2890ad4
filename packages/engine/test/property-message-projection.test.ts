import { type Fact, type Invocation, RuntimeEvent, ToolResult } from '@factum/agent-facts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { projectMessages, type SessionEvent } from '../src/context-projection.ts';
import { MessageProjection } from '../src/message-projection.ts';

// The incremental projection must give `projectMessages`'s prompt for any invocation at
// any point of any history — calls closed by later invocations (a parked call carried
// out by its continuation), operators reconciling old calls, continuations cut inside
// their source, an invocation id opened twice — and so must a layer over part of it.

const action = fc.oneof(
  fc.record({ kind: fc.constant('open' as const), content: fc.string({ maxLength: 6 }) }),
  fc.record({ kind: fc.constant('continue' as const), from: fc.nat(), cut: fc.nat() }),
  fc.record({ kind: fc.constant('reopen' as const), from: fc.nat() }),
  fc.record({
    kind: fc.constant('step' as const),
    text: fc.option(fc.string({ maxLength: 6 }), { nil: undefined }),
    calls: fc.nat({ max: 3 }),
  }),
  fc.record({
    kind: fc.constant('outcome' as const),
    operation: fc.nat(),
    fate: fc.constantFrom(
      'dispatched',
      'succeeded',
      'failed',
      'rejected',
      'reconciled',
      'unknown',
      'not_run',
    ),
  }),
  fc.record({ kind: fc.constant('end' as const) }),
);

/** Interprets actions as a session's events, with the results the settled calls stored. */
function historyOf(actions: readonly (typeof action extends fc.Arbitrary<infer T> ? T : never)[]) {
  const events: SessionEvent[] = [];
  const results = new Map<string, unknown>();
  const opened: Invocation[] = [];
  const operations: string[] = [];
  let current: Invocation | undefined;
  let steps = 0;
  const append = (fact: Fact, result?: ToolResult) => {
    const event = RuntimeEvent.create(current!, fact);
    if (result !== undefined) results.set(event.id, result.json());
    events.push({ sequence: events.length + 1, event });
  };
  const open = (invocationId: string) => {
    current = { sessionId: 's', turnId: invocationId, runId: invocationId, invocationId };
    opened.push(current);
  };
  for (const next of actions) {
    if (next.kind === 'open') {
      open(`i${opened.length}`);
      append({
        kind: 'invocation_opened',
        input: { kind: 'message', content: next.content, sourceMessages: [] },
      });
    } else if (next.kind === 'continue' && opened.length > 0) {
      const source = opened[next.from % opened.length]!;
      const own = events.filter((stored) => stored.event.invocation.invocationId === source.invocationId);
      const cut = own[next.cut % own.length]!.sequence;
      open(`i${opened.length}`);
      append({
        kind: 'invocation_opened',
        input: { kind: 'continuation', source: { invocation: source, highWater: cut, digest: 'sha256:cut' } },
      });
    } else if (next.kind === 'reopen' && opened.length > 0) {
      open(opened[next.from % opened.length]!.invocationId);
      append({ kind: 'invocation_opened', input: { kind: 'message', content: 'again', sourceMessages: [] } });
    } else if (next.kind === 'step' && current !== undefined) {
      steps += 1;
      const stepId = `${current.invocationId}/${steps}`;
      const calls = Array.from({ length: next.calls }, (_, c) => ({
        kind: 'tool_call' as const,
        call: { id: `c${c}`, name: 'echo', input: { c } },
      }));
      const parts = [
        ...(next.text === undefined ? [] : [{ kind: 'text' as const, text: next.text }]),
        ...calls,
      ];
      append({
        kind: 'model_completed',
        stepId,
        output: { parts, finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } },
      });
      for (let c = 0; c < next.calls; c += 1) operations.push(`${stepId}:c${c}`);
    } else if (next.kind === 'outcome' && current !== undefined && operations.length > 0) {
      const operationId = operations[next.operation % operations.length]!;
      const result = ToolResult.of({ operationId, at: events.length });
      const error = { code: 'boom', message: 'it failed' };
      if (next.fate === 'dispatched') {
        const call = {
          id: 'c0',
          name: 'echo',
          input: {},
          origin: { kind: 'provider' as const, stepId: 'x' },
        };
        append({ kind: 'tool_dispatched', operationId, call });
      } else if (next.fate === 'succeeded') {
        append(
          { kind: 'tool_settled', operationId, outcome: { kind: 'succeeded', result: result.reference() } },
          result,
        );
      } else if (next.fate === 'failed') {
        append({ kind: 'tool_settled', operationId, outcome: { kind: 'failed', error } });
      } else if (next.fate === 'rejected') {
        const call = { kind: 'provider' as const, stepId: 'x', callId: 'c0' };
        append({
          kind: 'tool_rejected',
          operationId,
          call,
          name: 'echo',
          input: {},
          reason: { kind: 'cancelled' },
        });
      } else if (next.fate === 'reconciled') {
        const decision = { kind: 'succeeded' as const, result: result.reference() };
        append({ kind: 'tool_reconciled', operationId, policy: 'reconcile', decision }, result);
      } else {
        const decision =
          next.fate === 'unknown'
            ? { kind: 'unknown' as const, note: 'cannot tell' }
            : { kind: 'not_run' as const };
        append({ kind: 'tool_reconciled', operationId, policy: 'reconcile', decision });
      }
    } else if (next.kind === 'end' && current !== undefined) {
      append({ kind: 'invocation_ended', outcome: { kind: 'completed' } });
    }
  }
  const ids = [...new Set(opened.map((invocation) => invocation.invocationId)), 'unknown'];
  return { events, read: async (eventId: string) => results.get(eventId), ids };
}

const history = fc.array(action, { minLength: 1, maxLength: 40 });

describe('the incremental projection of a session gives the whole projection’s prompt (properties)', () => {
  it('after every event, for every invocation', async () => {
    await fc.assert(
      fc.asyncProperty(history, async (actions) => {
        const { events, read, ids } = historyOf(actions);
        const projection = new MessageProjection(read);
        for (const [index, stored] of events.entries()) {
          projection.ingest(stored);
          const seen = events.slice(0, index + 1);
          for (const id of ids) {
            expect(await projection.messages(id)).toEqual(await projectMessages(seen, id, read));
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('in a layer over any part of the history, while the layer grows', async () => {
    await fc.assert(
      fc.asyncProperty(history, fc.nat(), fc.nat(), async (actions, cut, asked) => {
        const { events, read, ids } = historyOf(actions);
        const at = cut % (events.length + 1);
        const base = new MessageProjection(read);
        for (const stored of events.slice(0, at)) base.ingest(stored);
        // The base keeps lineages from earlier questions, as a replay's base does.
        await base.messages(ids[asked % ids.length]!);
        const layer = base.layer(read);
        for (const [index, stored] of events.slice(at).entries()) {
          layer.ingest(stored);
          const seen = events.slice(0, at + index + 1);
          for (const id of ids) {
            expect(await layer.messages(id)).toEqual(await projectMessages(seen, id, read));
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('drops every lineage built on an invocation whose call an operator decided, past the lineages it keeps', async () => {
    // Forty turns, each a call left uncertain — more kept lineages than are kept — then
    // the first turn's call reconciled: every later prompt carries its new outcome.
    const events: SessionEvent[] = [];
    let at: Invocation | undefined;
    const append = (fact: Fact) =>
      events.push({ sequence: events.length + 1, event: RuntimeEvent.create(at!, fact) });
    for (let turn = 0; turn < 40; turn += 1) {
      const invocationId = `i${turn}`;
      const stepId = `${invocationId}/1`;
      at = { sessionId: 's', turnId: invocationId, runId: invocationId, invocationId };
      append({ kind: 'invocation_opened', input: { kind: 'message', content: 'next', sourceMessages: [] } });
      const call = { id: 'c0', name: 'echo', input: {} };
      append({
        kind: 'model_completed',
        stepId,
        output: {
          parts: [{ kind: 'tool_call', call }],
          finishReason: 'tool_calls',
          usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
        },
      });
      const origin = { kind: 'provider' as const, stepId };
      append({ kind: 'tool_dispatched', operationId: `${stepId}:c0`, call: { ...call, origin } });
      append({ kind: 'invocation_ended', outcome: { kind: 'completed' } });
    }
    append({
      kind: 'tool_reconciled',
      operationId: 'i0/1:c0',
      policy: 'reconcile',
      decision: { kind: 'not_run' },
    });
    const read = async () => undefined;
    const projection = new MessageProjection(read);
    for (const [index, stored] of events.entries()) {
      projection.ingest(stored);
      const id = stored.event.invocation.invocationId;
      expect(await projection.messages(id)).toEqual(
        await projectMessages(events.slice(0, index + 1), id, read),
      );
    }
    const prompt = await projection.messages('i39');
    expect(JSON.stringify(prompt[2])).toContain('did not run');
  });

  it('keeps the messages of a step in the next step’s prompt as the same objects', async () => {
    const { events, read } = historyOf([
      { kind: 'open', content: 'first' },
      { kind: 'step', text: 'calling', calls: 1 },
      { kind: 'outcome', operation: 0, fate: 'dispatched' },
      { kind: 'outcome', operation: 0, fate: 'succeeded' },
      { kind: 'step', text: 'done', calls: 0 },
      { kind: 'end' },
      { kind: 'open', content: 'second' },
    ]);
    const base = new MessageProjection(read);
    for (const stored of events.slice(0, -1)) base.ingest(stored);
    const layer = base.layer(read);
    layer.ingest(events.at(-1)!);
    const before = await layer.messages('i1');
    const again = await layer.messages('i1');
    expect(before.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    expect(again.every((message, index) => message === before[index])).toBe(true);
    // Taking events under a layer in use would make its prompts stale: refused.
    base.ingest(events.at(-1)!);
    await expect(layer.messages('i1')).rejects.toThrow(/took events/);
  });
});
