import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, type Fact, FactSchema, RuntimeEvent } from '../src/index.ts';
import { anyEvent, factArbitraries } from './property-arbitraries.ts';

describe('facts (properties)', () => {
  it('there is a hand-written arbitrary for every fact kind the schema knows', () => {
    const kinds = FactSchema.options.map((option) => option.shape.kind.value).sort();
    expect(Object.keys(factArbitraries).sort()).toEqual(kinds);
  });

  const kinds = Object.keys(factArbitraries) as (keyof typeof factArbitraries)[];

  it.each(kinds)(
    'every %s fact round-trips through the schema and canonical bytes byte-identically',
    (kind) => {
      forEveryEvent(kind, 150, (base, fact) => {
        const event = { ...base, fact };
        const bytes = canonicalJson(event);
        const parsed = RuntimeEvent.parse(JSON.parse(bytes));
        // The schema neither drops, adds nor rewrites a field (compared with the JSON
        // image: JSON itself has no -0, so a -0 in a tool input is stored as 0).
        expect(parsed).toEqual(JSON.parse(bytes));
        expect(canonicalJson(parsed)).toBe(bytes);
      });
    },
  );

  // What `canonicalJson` relies on to write a created event without copying any of it.
  it.each(kinds)(
    'every object create builds for a fact of kind %s has its keys in canonical order',
    (kind) => {
      forEveryEvent(kind, 50, (base, fact) => {
        const event = RuntimeEvent.create(base.invocation, fact, { id: () => base.id });
        const unordered = builtObjects(event).filter((keys) => keys.join() !== [...keys].sort().join());
        expect(unordered).toEqual([]);
      });
    },
  );

  it('an event with any field removed or an unknown field added is refused, never repaired', () => {
    fc.assert(
      fc.property(anyEvent, fc.string({ minLength: 1, maxLength: 12 }), (event, extra) => {
        const fact = event.fact as Record<string, unknown>;
        fc.pre(!(extra in fact));
        expect(() => RuntimeEvent.parse({ ...event, fact: { ...fact, [extra]: 1 } })).toThrow();
        const { kind: _kind, ...withoutKind } = fact;
        expect(() => RuntimeEvent.parse({ ...event, fact: withoutKind })).toThrow();
      }),
      { numRuns: 200 },
    );
  });

  // Regression: z.json() rebuilds objects and drops an own key named __proto__ (what
  // JSON.parse makes of a model's `{"__proto__": …}`), so the parsed fact no longer has
  // the bytes it was written with.
  it('a tool input with a key named __proto__ round-trips through the schema byte-identically', () => {
    const input = JSON.parse('{"__proto__":{"admin":true},"value":1}');
    const event = RuntimeEvent.create(
      { sessionId: 's', turnId: 't', runId: 'r', invocationId: 'i' },
      {
        kind: 'tool_dispatched',
        operationId: 'step:c1',
        call: { id: 'c1', name: 'open', input, origin: { kind: 'provider', stepId: 'step' } },
      },
      { id: () => 'e', now: () => new Date(0) },
    );
    const written = canonicalJson({
      ...event,
      fact: { ...event.fact, call: { ...(event.fact as { call: object }).call, input } },
    });
    expect(canonicalJson(RuntimeEvent.parse(JSON.parse(written)))).toBe(written);
  });
});

/** Checks `property` on `runs` random events (an envelope, and a fact of `kind`). */
function forEveryEvent(
  kind: keyof typeof factArbitraries,
  runs: number,
  property: (base: RuntimeEvent, fact: Fact) => void,
): void {
  const facts = factArbitraries[kind] as fc.Arbitrary<Fact>;
  fc.assert(fc.property(anyEvent, facts, property), { numRuns: runs });
}

/**
 * The keys of every object `create` built: those it froze. The JSON values it shares with
 * its caller (a tool's input) are the caller's, in the caller's order, and not frozen.
 */
function builtObjects(value: unknown, found: string[][] = []): string[][] {
  if (typeof value !== 'object' || value === null || !Object.isFrozen(value)) return found;
  if (!Array.isArray(value)) found.push(Object.keys(value));
  for (const member of Object.values(value)) builtObjects(member, found);
  return found;
}
