import type { ModelStep } from '@factum/agent-facts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ProviderKind } from '../src/index.js';
import { renderScriptedStream } from '../src/render-scripted-stream.js';
import type { ScriptedAnswer } from '../src/scripted-reply.js';
import { parsePieces, splitAt } from './sse-pieces.js';

// sse-chunking.test.ts proves any chunking of one fixed answer parses the same; this
// extends it to arbitrary answers: any text, reasoning and tool calls (arguments split
// anywhere), rendered in every wire, split into any pieces.

const kinds: readonly ProviderKind[] = ['openai_chat_completions', 'openai_responses', 'anthropic_messages'];

const piece = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 });
const answer: fc.Arbitrary<ScriptedAnswer> = fc.record(
  {
    text: fc.array(piece, { minLength: 1, maxLength: 5 }),
    reasoning: fc.array(piece, { minLength: 1, maxLength: 3 }),
    toolCalls: fc
      .uniqueArray(
        fc.record({
          id: fc.stringMatching(/^call_[a-z0-9]{1,8}$/),
          name: fc.stringMatching(/^[a-z][a-z_]{0,10}$/),
          args: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
          cut: fc.nat(),
        }),
        { maxLength: 3, selector: (call) => call.id },
      )
      .map((calls) =>
        calls.map(({ id, name, args, cut }) => {
          const text = JSON.stringify(args);
          const at = cut % (text.length + 1);
          return { id, name, arguments: [text.slice(0, at), text.slice(at)].filter((p) => p !== '') };
        }),
      ),
  },
  { requiredKeys: [] },
);

const textOf = (step: ModelStep, kind: 'text' | 'reasoning') =>
  step.parts.flatMap((part) => (part.kind === kind ? [part.text] : [])).join('');

describe('SSE parsing of arbitrary answers (properties)', () => {
  it.each(kinds)('%s: any answer, in any chunking, parses to one step that says what was sent', (kind) => {
    fc.assert(
      fc.property(answer, fc.array(fc.nat(), { maxLength: 30 }), (sent, cuts) => {
        const bytes = new TextEncoder().encode(renderScriptedStream(kind, sent, 'test').join(''));
        const whole = parsePieces(kind, [bytes]);
        expect(parsePieces(kind, splitAt(bytes, cuts))).toEqual(whole);
        const pieces = (value: string | readonly string[] | undefined) =>
          value === undefined ? '' : typeof value === 'string' ? value : value.join('');
        expect(textOf(whole.step, 'text')).toBe(pieces(sent.text));
        expect(textOf(whole.step, 'reasoning')).toBe(pieces(sent.reasoning));
        const calls = whole.step.parts.flatMap((part) => (part.kind === 'tool_call' ? [part.call] : []));
        expect(calls.map((call) => ({ id: call.id, name: call.name, input: call.input }))).toEqual(
          (sent.toolCalls ?? []).map((call) => ({
            id: call.id,
            name: call.name,
            input: JSON.parse(pieces(call.arguments as readonly string[])),
          })),
        );
      }),
      { numRuns: 150 },
    );
  });
});
