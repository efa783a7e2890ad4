import { type Fact, type Invocation, RuntimeEvent } from '@factum/agent-facts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { projectMessages, type SessionEvent } from '../src/context-projection.ts';
import { MessageProjection } from '../src/message-projection.ts';
import { action, historyOf } from './session-history.ts';

// The incremental projection must give `projectMessages`'s prompt for any invocation at
// any point of any history — calls closed by later invocations (a parked call carried
// out by its continuation), operators reconciling old calls, continuations cut inside
// their source, an invocation id opened twice — and so must a layer over part of it.

const history = fc.array(action, { minLength: 1, maxLength: 40, size: 'max' });

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
