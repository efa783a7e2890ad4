import type { ModelObservation, ToolExecutor } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Engine } from '../src/index.ts';
import { InvocationWriter } from '../src/invocation-writer.ts';
import { MAX_MERGED_CHARS } from '../src/observation-merge.ts';
import { input, temporaryDirectory } from './support/agent-loop.ts';

const bounds = { maxEvents: 1000, maxBytes: 1024 * 1024 };

const text = (kind: 'text_delta' | 'reasoning_delta' | 'refusal_delta') =>
  fc.record({ kind: fc.constant(kind), text: fc.string({ maxLength: 40 }) });
const toolDelta = fc.record(
  {
    kind: fc.constant('tool_call_delta' as const),
    index: fc.constantFrom(0, 1),
    id: fc.constantFrom('call-a', 'call-b'),
    name: fc.constantFrom('echo', 'fail'),
    argumentsDelta: fc.string({ maxLength: 40 }),
  },
  { requiredKeys: ['kind', 'index', 'argumentsDelta'] },
);
const observation: fc.Arbitrary<ModelObservation> = fc.oneof(
  text('text_delta'),
  text('text_delta'),
  text('reasoning_delta'),
  text('refusal_delta'),
  toolDelta,
);
/** A stream, sometimes with one long run of text that must be cut at the cap. */
const stream = fc.oneof(
  fc.array(observation, { maxLength: 30 }),
  fc.constant(
    Array.from({ length: 600 }, (_, i): ModelObservation => ({ kind: 'text_delta', text: `piece ${i} ` })),
  ),
);

/** Where a piece of the stream belongs: its kind, and a tool call's index. */
const place = (o: ModelObservation) => (o.kind === 'tool_call_delta' ? `tool:${o.index}` : o.kind);
const content = (o: ModelObservation) => (o.kind === 'tool_call_delta' ? o.argumentsDelta : o.text);
const withoutRepeats = (places: string[]) => places.filter((p, i) => i === 0 || places[i - 1] !== p);

/**
 * Deferred observations ride as pieces of the stream: what the log records, read in
 * order, is what the model streamed — each kind's text, each tool call's id, name and
 * arguments — in no more facts than deltas, none over the cap.
 */
describe('a deferred stream is recorded a piece at a time (properties)', () => {
  it('the recorded pieces, read in order, give what was streamed', async () => {
    using dir = temporaryDirectory();
    const log = await EventLog.open(dir.file);
    let runs = 0;
    try {
      await fc.assert(
        fc.asyncProperty(stream, async (deltas) => {
          runs += 1;
          const invocation = { sessionId: `s${runs}`, turnId: 't', runId: 'r', invocationId: 'i' };
          const writer = new InvocationWriter(log, invocation);
          await writer.open({
            kind: 'invocation_opened',
            input: { kind: 'message', content: 'go', sourceMessages: [] },
          });
          for (const delta of deltas) writer.observe('step-1', delta);
          await writer.write({ kind: 'invocation_ended', outcome: { kind: 'completed' } });

          const recorded = (await log.invocationEvents(invocation, bounds)).flatMap(({ event }) =>
            event.fact.kind === 'model_observed' ? [event.fact.observation] : [],
          );
          expect(recorded.length).toBeLessThanOrEqual(deltas.length);
          for (const o of recorded) expect(content(o).length).toBeLessThanOrEqual(MAX_MERGED_CHARS);
          for (const where of new Set(deltas.map(place))) {
            const of = (list: ModelObservation[]) =>
              list
                .filter((o) => place(o) === where)
                .map(content)
                .join('');
            expect(of(recorded), where).toBe(of(deltas));
          }
          expect(withoutRepeats(recorded.map(place))).toEqual(withoutRepeats(deltas.map(place)));
          // A tool call's id and name stay where a client reading the pieces finds them first.
          const first = (list: ModelObservation[], key: 'id' | 'name', index: number) =>
            list.find(
              (o): o is ModelObservation & { kind: 'tool_call_delta' } =>
                o.kind === 'tool_call_delta' && o.index === index && o[key] !== undefined,
            )?.[key];
          for (const index of [0, 1]) {
            for (const key of ['id', 'name'] as const) {
              expect(first(recorded, key, index)).toBe(first(deltas, key, index));
            }
          }
          // Text under the cap is one fact per run of one kind; a long run is cut.
          const short = deltas.map(content).join('').length <= MAX_MERGED_CHARS;
          if (short && deltas.every((o) => o.kind !== 'tool_call_delta')) {
            expect(recorded).toHaveLength(withoutRepeats(deltas.map(place)).length);
          }
          if (deltas.length === 600) expect(recorded.length).toBeGreaterThan(1);
        }),
        { numRuns: 60 },
      );
    } finally {
      await log.close();
    }
  }, 60_000);
});

/**
 * A run's streamed answer: deferred (the default), it rides as one `model_observed` per
 * piece of the stream; with `liveModelFacts`, every delta is its own fact as it comes,
 * for a tail of the log. The observer sees every delta either way.
 */
describe.each(testStores())('a streamed answer on $name', (stores) => {
  it.each([
    { live: false, facts: ['reasoning_delta:thinking hard', 'text_delta:The answer is 42'] },
    {
      live: true,
      facts: [
        'reasoning_delta:thinking ',
        'reasoning_delta:hard',
        'text_delta:The ',
        'text_delta:answer ',
        'text_delta:is ',
        'text_delta:42',
      ],
    },
  ])('liveModelFacts $live records $facts.length observations', async ({ live, facts }) => {
    await using store = await stores.create();
    await using provider = await startScriptedProvider();
    provider.script({
      reasoning: ['thinking ', 'hard'],
      text: ['The ', 'answer ', 'is ', '42'],
      finishReason: 'stop',
    });
    const log = await EventLog.open(store.target);
    try {
      const engine = new Engine({
        log,
        models: new ModelExecutor({ timeoutMs: 10_000 }),
        code: new CodeExecutor(),
        options: { liveModelFacts: live },
      });
      const seen: string[] = [];
      const run = input(provider, 'streamed', new EchoNothing());
      const result = await engine.run(run, {
        observer: { onObservation: (_, o) => seen.push(o.kind === 'tool_call_delta' ? '' : o.text) },
      });
      expect(result.outcome).toEqual({ kind: 'completed' });
      expect(seen).toEqual(['thinking ', 'hard', 'The ', 'answer ', 'is ', '42']);
      const kinds = (await log.invocationEvents(run.invocation, bounds)).map(({ event }) => event.fact);
      expect(
        kinds.flatMap((fact) =>
          fact.kind === 'model_observed' && fact.observation.kind !== 'tool_call_delta'
            ? [`${fact.observation.kind}:${fact.observation.text}`]
            : [],
        ),
      ).toEqual(facts);
      expect(kinds.map((fact) => fact.kind).filter((kind) => kind !== 'model_observed')).toEqual([
        'invocation_opened',
        'model_requested',
        'model_completed',
        'invocation_ended',
      ]);
      await engine.drain();
    } finally {
      await log.close();
    }
  });
});

class EchoNothing implements ToolExecutor {
  names() {
    return ['echo'];
  }
  async invoke(): Promise<unknown> {
    throw new Error('no tool is called in this run');
  }
}
