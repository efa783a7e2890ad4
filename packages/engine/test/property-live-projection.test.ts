import { canonicalJson, type FactOf, type RuntimeEvent } from '@factum/agent-facts';
import { chainLink, contentDigest } from '@factum/agent-facts/digest';
import { CodeExecutor } from '@factum/code-runtime';
import { EMPTY_DIGEST, EventLog } from '@factum/event-log';
import { ModelExecutor, type ModelRequest, requestDigest, wireBody } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { ToolCatalog, ToolHandler } from '@factum/tools';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Engine, projectMessages } from '../src/index.ts';
import { temporaryDirectory } from './support/agent-loop.ts';

const wide = { maxEvents: 100_000, maxBytes: 64 * 1024 * 1024 };

/** What one call of a step asks for: a tool that answers, one that throws, one that is missing, bad JSON. */
const call = fc.record({
  name: fc.constantFrom('echo', 'echo', 'fail', 'missing'),
  value: fc.jsonValue({ maxDepth: 2 }),
  badArguments: fc.boolean(),
});
const turn = fc.record({
  message: fc.string({ maxLength: 16 }),
  steps: fc.array(fc.array(call, { minLength: 1, maxLength: 2 }), { maxLength: 2 }),
  answer: fc.string({ maxLength: 16 }),
  // Which of two engines (two log handles on one file, as two processes) runs the turn:
  // the other's facts must invalidate a projection kept in memory. An engine that ran
  // this session before builds its turn's first step on its own history unread; the
  // other's turn since makes the log refuse that step with the opening, and the run
  // starts over on the log's head: one request sent and never recorded.
  engine: fc.constantFrom(0, 1),
});

const tools = new ToolCatalog(
  ['echo', 'fail'].map((name) => ({
    definition: { name, description: name, inputSchema: { type: 'object' } },
    handler: ToolHandler.immediate({
      names: () => [name],
      invoke: async (_: string, input: unknown) => {
        if (name === 'fail') throw new Error('it failed');
        return input;
      },
    }),
    nesting: 'nestable' as const,
    semantics: 'parallel' as const,
  })),
);

type Requested = { sequence: number; event: RuntimeEvent; fact: FactOf<'model_requested'> };

describe('a prompt projected in memory equals the prompt projected from the reopened log (properties)', () => {
  it('every request sent is, byte for byte, the one rebuilt from the log after reopen', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(turn, { minLength: 1, maxLength: 4 }), async (turns) => {
        using dir = temporaryDirectory();
        await using provider = await startScriptedProvider();
        const config = provider.config({ model: 'test' });
        const logs = [await EventLog.open(dir.file), await EventLog.open(dir.file)];
        const engines = logs.map(
          (log, index) =>
            new Engine({
              log,
              models: new ModelExecutor({ timeoutMs: 10_000 }),
              code: new CodeExecutor(),
              options: { lease: { hostId: `host-${index}` } },
            }),
        );
        /** The indexes of requests sent on a stale history (refused, never recorded). */
        const discarded = new Set<number>();
        for (const [index, planned] of turns.entries()) {
          const replies = [
            ...planned.steps.map((step) => ({
              toolCalls: step.map((one, c) => ({
                id: `call-${c}`,
                name: one.name,
                arguments: one.badArguments ? '{"value":' : JSON.stringify({ value: one.value }),
              })),
              finishReason: 'tool_calls' as const,
            })),
            { text: planned.answer, finishReason: 'stop' as const },
          ];
          const previous = turns.slice(0, index).findLastIndex((turn) => turn.engine === planned.engine);
          if (
            previous >= 0 &&
            turns.slice(previous + 1, index).some((turn) => turn.engine !== planned.engine)
          ) {
            discarded.add(provider.recorded.length + provider.pending);
            provider.script(replies[0]!);
          }
          provider.script(...replies);
          const outcome = await engines[planned.engine]!.run({
            invocation: {
              sessionId: 'session',
              turnId: `t${index}`,
              runId: `r${index}`,
              invocationId: `i${index}`,
            },
            provider: config,
            configuration: { cwd: '/', toolMode: 'direct' },
            work: { kind: 'message', message: planned.message, tools, allowPriorUnknown: true },
          });
          expect(outcome.outcome).toEqual({ kind: 'completed' });
          // Exactly the replies planned were asked for: a start over where predicted, no other.
          expect(provider.pending).toBe(0);
        }
        for (const engine of engines) await engine.close();
        for (const log of logs) await log.close();

        const reopened = await EventLog.open(dir.file);
        const events = (await reopened.scopedPrefix({ session: 'session' }, wide)).events;
        const requested: Requested[] = events.flatMap(({ sequence, event }) =>
          event.fact.kind === 'model_requested' ? [{ sequence, event, fact: event.fact }] : [],
        );
        const sent = provider.recorded.filter((_, index) => !discarded.has(index));
        expect(provider.recorded).toHaveLength(sent.length + discarded.size);
        expect(requested).toHaveLength(sent.length);
        for (const [index, { event, fact }] of requested.entries()) {
          // The prefix the request names is the session's chain up to its high water.
          const prefix = events.filter(({ sequence }) => sequence <= fact.source.highWater);
          const digest = prefix.reduce<string | undefined>(
            (link, stored) => chainLink(link, contentDigest(canonicalJson(stored.event))),
            undefined,
          );
          expect(fact.source.digest).toBe(digest ?? EMPTY_DIGEST);
          // A run's first request also carries the run's own opening, which rode in the
          // same transaction as that request's step (after the source it names).
          const opening = events.find(
            (stored) =>
              stored.event.invocation.invocationId === event.invocation.invocationId &&
              stored.event.fact.kind === 'invocation_opened',
          );
          expect(opening).toBeDefined();
          if (opening!.sequence > fact.source.highWater) {
            expect(fact.stepId).toBe(`${event.invocation.invocationId}/1`);
            prefix.push(opening!);
          }
          const messages = await projectMessages(prefix, event.invocation.invocationId, async (eventId) =>
            (await reopened.resolveToolResult('session', eventId)).json(),
          );
          const request: ModelRequest = { messages, tools: tools.specs() };
          // Sent as its canonical text, the very bytes the recorded digest names.
          expect(sent[index]!.text).toBe(canonicalJson(wireBody(config, request)));
          expect(contentDigest(sent[index]!.text)).toBe(fact.inputDigest);
          // The digest recorded, made step by step from the last one, is the whole request's.
          expect(fact.inputDigest).toBe(requestDigest(config, request));
        }
        await reopened.close();
      }),
      { numRuns: 12 },
    );
  }, 600_000);
});
