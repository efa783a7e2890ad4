import type { Fact, JsonValue } from '@factum/agent-facts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { comparable, sameFact } from '../src/replay/compare-facts.ts';

const dispatched = (input: JsonValue): Fact => ({
  kind: 'tool_dispatched',
  operationId: 's1:c1',
  call: { id: 'c1', name: 'echo', input, origin: { kind: 'provider', stepId: 's1' } },
});
const requested = (highWater: number, digest: string): Fact => ({
  kind: 'model_requested',
  stepId: 'i/1',
  modelId: 'm',
  purpose: 'main',
  source: { scope: { kind: 'session', id: 's' }, highWater, digest },
  inputDigest: 'sha256:x',
  routeIdentity: 'openai_chat_completions http://127.0.0.1 m',
});

/** A copy of `value` with the leaf or key at a random place changed. */
function changed(value: JsonValue, pick: number, replacement: JsonValue): JsonValue {
  if (typeof value !== 'object' || value === null) return replacement;
  const entries = Array.isArray(value) ? [...value.entries()] : Object.entries(value);
  if (entries.length === 0) return Array.isArray(value) ? [replacement] : { added: replacement };
  const [key, inner] = entries[pick % entries.length]!;
  if (Array.isArray(value))
    return value.map((item, index) => (index === key ? changed(inner, pick >> 1, replacement) : item));
  return pick % 3 === 0
    ? { ...value, [`${key}-renamed`]: inner }
    : { ...value, [key]: changed(inner, pick >> 1, replacement) };
}

describe('comparing a replayed fact with a recorded one', () => {
  it('calls two facts the same exactly when their canonical texts are equal', () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.nat(),
        fc.jsonValue(),
        fc.boolean(),
        (input, pick, replacement, copy) => {
          const recorded = dispatched(input as JsonValue);
          const replayed = copy
            ? dispatched(structuredClone(input) as JsonValue)
            : dispatched(changed(input as JsonValue, pick, replacement as JsonValue));
          expect(sameFact(recorded, replayed)).toBe(comparable(recorded) === comparable(replayed));
          if (copy) expect(sameFact(recorded, replayed)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('leaves out where a request stood in the log, and nothing else', () => {
    const recorded = requested(7, 'sha256:a');
    expect(sameFact(recorded, requested(9, 'sha256:b'))).toBe(true);
    const { source: _source, ...withoutSource } = recorded as Fact & { source: unknown };
    // A fact lacking the field, or carrying another in its place, is a different fact.
    expect(sameFact(recorded, { ...withoutSource, other: 1 } as unknown as Fact)).toBe(false);
    expect(sameFact(recorded, { ...recorded, modelId: 'n' } as Fact)).toBe(false);
    expect(sameFact(recorded, { ...recorded, extra: undefined } as unknown as Fact)).toBe(true);
    expect(sameFact(dispatched({ when: 1 }), dispatched({ when: '1' }))).toBe(false);
  });
});
