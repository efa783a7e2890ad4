import { canonicalJson, type JsonValue, type ModelPart } from '@factum/agent-facts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ModelMessage,
  type ModelRequest,
  type ProviderConfig,
  type ProviderKind,
  RequestDigester,
  requestDigest,
  wireBody,
} from '../src/index.js';

// The digester must give `requestDigest`'s digest for every request of a conversation,
// however the conversation grows, shrinks or is rewritten between requests, in every
// wire format, whatever the options and overlays say.

const kinds: readonly ProviderKind[] = ['openai_chat_completions', 'openai_responses', 'anthropic_messages'];

const text = fc.string({ unit: 'grapheme', maxLength: 8 });
const json = fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<JsonValue>;
const call = fc.record({
  id: fc.stringMatching(/^call_[a-z0-9]{1,6}$/),
  name: fc.stringMatching(/^[a-z][a-z_]{0,8}$/),
  input: json,
});
const part: fc.Arbitrary<ModelPart> = fc.oneof(
  text.map((t) => ({ kind: 'text' as const, text: t })),
  text.map((t) => ({ kind: 'reasoning' as const, text: t })),
  text.map((t) => ({ kind: 'refusal' as const, text: t })),
  call.map((c) => ({ kind: 'tool_call' as const, call: c })),
);
const message: fc.Arbitrary<ModelMessage> = fc.oneof(
  text.map((content) => ({ role: 'system' as const, content })),
  text.map((content) => ({ role: 'user' as const, content })),
  fc.array(part, { maxLength: 4 }).map((parts) => ({ role: 'assistant' as const, parts })),
  fc.record({
    role: fc.constant('tool' as const),
    callId: fc.stringMatching(/^call_[a-z0-9]{1,6}$/),
    name: fc.constant('echo'),
    result: fc.oneof(
      json.map((value) => ({ kind: 'value' as const, value })),
      text.map((t) => ({ kind: 'text' as const, text: t })),
      text.map((m) => ({ kind: 'error' as const, message: m })),
      fc.constant({ kind: 'rejected' as const, rejection: { kind: 'cancelled' as const } }),
    ),
  }),
);

/** What happens between two requests: messages added, some dropped from the end, one replaced. */
const edit = fc.record({
  drop: fc.nat({ max: 3 }),
  replace: fc.option(fc.nat(), { nil: undefined }),
  add: fc.array(message, { maxLength: 4 }),
  maxOutputTokens: fc.option(fc.integer({ min: 1, max: 500 }), { nil: undefined }),
  tools: fc.boolean(),
});

const schema = { type: 'object' };

const providerOf = (kind: ProviderKind, variant: number): ProviderConfig => ({
  kind,
  baseUrl: 'http://127.0.0.1:1/v1',
  model: 'm',
  auth: { none: true },
  ...(variant === 1 ? { capabilities: { systemRole: 'developer' } } : {}),
  ...(variant === 2 ? { bodyOverlay: { temperature: 0, metadata: { a: 1 } } } : {}),
  // An overlay that replaces the conversation: digested whole.
  ...(variant === 3 ? { bodyOverlay: kind === 'openai_responses' ? { input: [] } : { messages: [] } } : {}),
});

/**
 * The text the digest was taken of is the request's canonical body, byte for byte (what
 * the executor sends when given it), unless the request was digested whole.
 */
function expectBody(
  digester: RequestDigester,
  provider: ProviderConfig,
  request: ModelRequest,
  whole: boolean,
) {
  const body = digester.body();
  if (whole) expect(body).toBeUndefined();
  else expect(body).toBe(canonicalJson(wireBody(provider, request)));
}

function conversations(
  edits: fc.Arbitrary<(typeof edit extends fc.Arbitrary<infer T> ? T : never)[]>,
  numRuns: number,
) {
  fc.assert(
    fc.property(
      fc.constantFrom(...kinds),
      fc.nat({ max: 3 }),
      edits,
      fc.option(
        fc.dictionary(fc.constantFrom('temperature', 'top_p', 'stream'), fc.jsonValue({ maxDepth: 1 })),
        {
          nil: undefined,
        },
      ),
      (kind, variant, edits, providerOptions) => {
        const provider = providerOf(kind, variant);
        const digester = new RequestDigester();
        let messages: ModelMessage[] = [];
        for (const step of edits) {
          messages = messages.slice(0, Math.max(0, messages.length - step.drop));
          if (step.replace !== undefined && messages.length > 0) {
            const at = step.replace % messages.length;
            // Equal content in a new object: the digester must not take it for the old one.
            messages[at] = structuredClone(messages[at]!);
          }
          messages = [...messages, ...step.add];
          const request: ModelRequest = {
            messages,
            // Tools made anew each step from the same schema, as a run makes them from its catalog.
            tools: step.tools ? [{ name: 'echo', description: 'e', inputSchema: schema }] : [],
            ...(step.maxOutputTokens === undefined ? {} : { maxOutputTokens: step.maxOutputTokens }),
            ...(providerOptions === undefined ? {} : { providerOptions }),
          };
          expect(digester.digest(provider, request)).toBe(requestDigest(provider, request));
          expectBody(digester, provider, request, variant === 3);
        }
      },
    ),
    { numRuns },
  );
}

/** What happens to a conversation given in parts between two requests. */
const partEdit = fc.record({
  keep: fc.nat({ max: 6 }),
  add: fc.array(fc.record({ messages: fc.array(message, { maxLength: 5 }), frozen: fc.boolean() }), {
    maxLength: 3,
  }),
  // An unfrozen part kept may be changed in place: a message replaced, added or dropped.
  change: fc.option(fc.record({ part: fc.nat(), at: fc.nat(), with: message, how: fc.nat({ max: 2 }) }), {
    nil: undefined,
  }),
});

describe('RequestDigester', () => {
  it('gives requestDigest for every request of a conversation that grows, shrinks and is rewritten', () => {
    conversations(fc.array(edit, { minLength: 1, maxLength: 8 }), 400);
  });

  it('does so for long conversations, rewound past the states it keeps', () => {
    const long = fc.record({
      drop: fc.nat({ max: 80 }),
      replace: fc.option(fc.nat(), { nil: undefined }),
      add: fc.array(message, { maxLength: 70 }),
      maxOutputTokens: fc.constant(undefined),
      tools: fc.constant(true),
    });
    conversations(fc.array(long, { minLength: 2, maxLength: 10 }), 60);
  });

  it('leaves no body after a digest that failed midway', () => {
    const digester = new RequestDigester();
    const provider = providerOf('openai_chat_completions', 0);
    const hello: ModelMessage = { role: 'user', content: 'hi' };
    digester.digest(provider, { messages: [hello], tools: [] });
    expect(digester.body()).toBe(canonicalJson(wireBody(provider, { messages: [hello], tools: [] })));
    // An input with no JSON form fails the digest after the first message was kept.
    const call = { id: 'call_1', name: 'f', input: 1n as unknown as JsonValue };
    const bad: ModelMessage = { role: 'assistant', parts: [{ kind: 'tool_call', call }] };
    expect(() => digester.digest(provider, { messages: [hello, bad], tools: [] })).toThrow();
    expect(digester.body()).toBeUndefined();
  });

  it('follows a provider changed between requests of one conversation', () => {
    const digester = new RequestDigester();
    const messages: ModelMessage[] = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hello' },
      { role: 'assistant', parts: [{ kind: 'text', text: 'hi' }] },
    ];
    const seen = new Set<string>();
    for (const kind of [...kinds, ...kinds]) {
      for (const variant of [0, 1, 2]) {
        const provider = providerOf(kind, variant);
        const request = { messages, tools: [] };
        const digest = digester.digest(provider, request);
        expect(digest).toBe(requestDigest(provider, request));
        seen.add(digest);
      }
    }
    // The formats, the system role and the overlay change the body — except the system
    // role for Anthropic, whose system text is no message.
    expect(seen.size).toBe(8);
  });

  it('gives requestDigest for a conversation given in parts, frozen parts known by identity', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...kinds),
        fc.nat({ max: 2 }),
        fc.array(partEdit, { minLength: 1, maxLength: 10 }),
        (kind, variant, edits) => {
          const provider = providerOf(kind, variant);
          const digester = new RequestDigester();
          const whole = new RequestDigester();
          let parts: ModelMessage[][] = [];
          for (const step of edits) {
            parts = parts.slice(0, step.keep);
            const changed =
              step.change === undefined ? undefined : parts[step.change.part % (parts.length || 1)];
            if (step.change !== undefined && changed !== undefined && !Object.isFrozen(changed)) {
              const at = step.change.at % (changed.length + 1);
              if (step.change.how === 0) changed.splice(at, 0, step.change.with);
              else if (step.change.how === 1) changed.splice(at, 1);
              else changed[at] = structuredClone(changed[at] ?? step.change.with);
            }
            for (const added of step.add)
              parts.push(
                added.frozen ? (Object.freeze([...added.messages]) as ModelMessage[]) : [...added.messages],
              );
            const request = { tools: [{ name: 'echo', description: 'e', inputSchema: schema }] };
            const expected = requestDigest(provider, { ...request, messages: parts.flat() });
            expect(digester.digestParts(provider, request, parts)).toBe(expected);
            expectBody(digester, provider, { ...request, messages: parts.flat() }, false);
            // The same conversations given whole: the same digests.
            expect(whole.digest(provider, { ...request, messages: parts.flat() })).toBe(expected);
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});
