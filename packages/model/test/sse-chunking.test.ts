import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ProviderKind } from '../src/index.js';
import { renderScriptedStream } from '../src/render-scripted-stream.js';
import { startScriptedProvider } from '../src/testing.js';
import { parsePieces, splitAt } from './sse-pieces.js';
import { collect, executor, hello } from './support.js';

const kinds: readonly ProviderKind[] = ['openai_chat_completions', 'openai_responses', 'anthropic_messages'];

const answer = {
  reasoning: ['weigh ', 'options'],
  text: ['héllo ', '🌍 wörld', ' — ok'],
  toolCalls: [
    { id: 'c1', name: 'read', arguments: ['{"path":', '"ü.txt"}'] },
    { id: 'c2', name: 'list', arguments: '{"dir":"/"}' },
  ],
};

function bodyOf(kind: ProviderKind, lineEnd = '\n'): Uint8Array {
  const text = `: keep-alive comment\n\n${renderScriptedStream(kind, answer, 'test').join('')}`;
  return new TextEncoder().encode(lineEnd === '\n' ? text : text.replaceAll('\n', lineEnd));
}

/** The executor's parse path without HTTP: bytes → UTF-8 → SSE → adapter → step. */

describe('SSE framing across chunk boundaries', () => {
  it.each(kinds)(
    '%s: a split at every single byte boundary parses to the same step and observations',
    (kind) => {
      const bytes = bodyOf(kind);
      const whole = parsePieces(kind, [bytes]);
      expect(whole.step.parts).toHaveLength(4);
      for (let cut = 0; cut <= bytes.length; cut++) {
        expect(parsePieces(kind, splitAt(bytes, [cut]))).toEqual(whole);
      }
    },
  );

  it.each(kinds)(
    '%s: any chunking, with LF or CRLF line ends, parses to the same step (property)',
    (kind) => {
      const expected = parsePieces(kind, [bodyOf(kind)]);
      fc.assert(
        fc.property(
          fc.constantFrom('\n', '\r\n'),
          fc.array(fc.nat({ max: 10_000 }), { maxLength: 40 }),
          (lineEnd, cuts) => {
            const bytes = bodyOf(kind, lineEnd);
            expect(parsePieces(kind, splitAt(bytes, cuts))).toEqual(expected);
          },
        ),
        { numRuns: 200 },
      );
    },
  );

  it('one byte per chunk parses to the same step', () => {
    const bytes = bodyOf('openai_chat_completions');
    const pieces = Array.from(bytes, (_, i) => bytes.subarray(i, i + 1));
    expect(parsePieces('openai_chat_completions', pieces)).toEqual(
      parsePieces('openai_chat_completions', [bytes]),
    );
  });

  it('over real HTTP, bytes written in arbitrary pieces give the same step as one write', async () => {
    const bytes = bodyOf('openai_chat_completions');
    const text = new TextDecoder().decode(bytes);
    const cuts = fc.sample(fc.array(fc.nat({ max: text.length }), { minLength: 5, maxLength: 30 }), {
      numRuns: 5,
      seed: 7,
    });
    await using provider = await startScriptedProvider();
    provider.script({ raw: text });
    const whole = await collect(executor(), hello, { provider: provider.config() });
    for (const sample of cuts) {
      const points = [...new Set(sample)].sort((a, b) => a - b);
      const pieces = [...points, text.length].map((end, i) => text.slice(i === 0 ? 0 : points[i - 1], end));
      provider.script({ raw: pieces, chunkDelayMs: 1 });
      expect(await collect(executor(), hello, { provider: provider.config() })).toEqual(whole);
    }
  });
});
