import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ModelError, type ProviderKind } from '../src/index.js';
import { renderScriptedStream } from '../src/render-scripted-stream.js';
import { SecretRedactor } from '../src/secret-redactor.js';
import { SseReader } from '../src/sse-reader.js';
import { StepBuilder } from '../src/step-builder.js';
import { startScriptedProvider } from '../src/testing.js';
import { adapterFor } from '../src/wire-request.js';
import { executor, hello, within } from './support.js';

const kinds: readonly ProviderKind[] = ['openai_chat_completions', 'openai_responses', 'anthropic_messages'];
const valid = (kind: ProviderKind) =>
  renderScriptedStream(
    kind,
    { text: ['a', 'b'], toolCalls: [{ id: 'c', name: 'n', arguments: '{}' }] },
    'm',
  ).join('');

/**
 * What a hostile or broken provider may send: random bytes, random text, valid SSE lines
 * with random JSON, and a valid stream with bytes flipped, cut or spliced in.
 */
function hostile(kind: ProviderKind): fc.Arbitrary<Uint8Array> {
  const encode = (text: string) => new TextEncoder().encode(text);
  const line = fc.oneof(
    fc.jsonValue().map((value) => `data: ${JSON.stringify(value)}\n\n`),
    fc.string({ unit: 'binary', maxLength: 40 }).map((text) => `data: ${text}\n\n`),
    fc.constantFrom(
      'data: [DONE]\n\n',
      'event: error\ndata: {"error":{}}\n\n',
      ': comment\n',
      '\n',
      'retry: x\n',
    ),
    fc.string({ unit: 'binary', maxLength: 20 }),
  );
  const mutated = fc
    .tuple(fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 6 }), fc.nat())
    .map(([flips, cut]) => {
      const bytes = encode(valid(kind));
      for (const [at, value] of flips) bytes[at % bytes.length] = value;
      return bytes.subarray(0, bytes.length - (cut % 40));
    });
  return fc.oneof(
    fc.uint8Array({ maxLength: 200 }),
    fc.array(line, { maxLength: 8 }).map((lines) => encode(lines.join(''))),
    mutated,
  );
}

/** The executor's parse path without HTTP; returns 'step' or the error it threw. */
function parse(kind: ProviderKind, bytes: Uint8Array, cut: number): unknown {
  const context = {
    baseUrl: 'http://x',
    kind,
    model: 'm',
    hasApiKey: false,
    redactor: new SecretRedactor([]),
  };
  try {
    const decoder = adapterFor(kind).decoder(new StepBuilder(() => {}), context);
    const reader = new SseReader((event) => decoder.event(event));
    const at = cut % (bytes.length + 1);
    reader.push(bytes.subarray(0, at));
    reader.push(bytes.subarray(at));
    reader.end();
    decoder.finish();
    return 'step';
  } catch (error) {
    return error;
  }
}

describe('fuzzing the stream decoders', () => {
  it.each(kinds)('%s: any bytes end in a step or a typed ModelError, never another throw', (kind) => {
    fc.assert(
      fc.property(hostile(kind), fc.nat(), (bytes, cut) => {
        const outcome = parse(kind, bytes, cut);
        if (outcome !== 'step') expect(ModelError.isInstance(outcome), String(outcome)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('over real HTTP, hostile bodies end in a step or a typed ModelError within the idle timeout', async () => {
    await using provider = await startScriptedProvider();
    const models = executor({ idleTimeoutMs: 300, timeoutMs: 3_000 });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...kinds),
        fc.nat(),
        fc.boolean(),
        fc.constantFrom('text/event-stream', 'application/json', 'text/html', 'text/plain'),
        async (kind, seed, stall, contentType) => {
          const [bytes] = fc.sample(hostile(kind), { numRuns: 1, seed });
          const text = Buffer.from(bytes!).toString('latin1');
          // A stall sends the bytes and then nothing, with the connection open: the idle
          // timeout must end it.
          provider.script(
            stall ? { raw: [text, ''], chunkDelayMs: 10_000, contentType } : { raw: text, contentType },
          );
          const stream = models.stream(hello, { provider: provider.config({ kind }) });
          const outcome = await within(
            stream.step().then(
              () => 'step',
              (error: unknown) => error,
            ),
            5_000,
            'the stream to end',
          );
          if (outcome !== 'step') expect(ModelError.isInstance(outcome), String(outcome)).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);
});
