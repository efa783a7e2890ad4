import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, type JsonValue, sameJson } from '../src/index.ts';

/** A copy of `value` with the leaf or key at a random place changed. */
function changed(value: JsonValue, pick: number, replacement: JsonValue): JsonValue {
  if (typeof value !== 'object' || value === null) return replacement;
  if (Array.isArray(value)) {
    if (value.length === 0 || pick % 5 === 0) return [...value, replacement];
    const at = pick % value.length;
    return value.map((item, index) => (index === at ? changed(item, pick >> 1, replacement) : item));
  }
  const keys = Object.keys(value);
  if (keys.length === 0) return { added: replacement };
  const key = keys[pick % keys.length]!;
  if (pick % 3 === 0) {
    const { [key]: moved, ...rest } = value;
    return { ...rest, [`${key}'`]: moved! };
  }
  return { ...value, [key]: changed(value[key]!, pick >> 1, replacement) };
}

/** The same value with every object's keys in another order. */
function reordered(value: JsonValue): JsonValue {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(reordered);
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([key, item]) => [key, reordered(item)]),
  );
}

const json = fc.jsonValue() as fc.Arbitrary<JsonValue>;

describe('sameJson', () => {
  it('is true exactly when two JSON values have one canonical text', () => {
    fc.assert(
      fc.property(json, fc.nat(), json, fc.nat({ max: 2 }), (value, pick, replacement, how) => {
        const other =
          how === 0
            ? structuredClone(value)
            : how === 1
              ? reordered(value)
              : changed(value, pick, replacement);
        expect(sameJson(value, other)).toBe(canonicalJson(value) === canonicalJson(other));
        if (how < 2) expect(sameJson(value, other)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('leaves out the one outer member it is told to, and takes nothing but plain data for the same', () => {
    expect(sameJson({ kind: 'a', at: 1 }, { kind: 'a', at: 2 }, 'at')).toBe(true);
    expect(sameJson({ kind: 'a', at: 1 }, { kind: 'a' }, 'at')).toBe(true);
    expect(sameJson({ kind: 'a', at: 1 }, { kind: 'a', other: 1 }, 'at')).toBe(false);
    expect(sameJson({ inner: { at: 1 } }, { inner: { at: 2 } }, 'at')).toBe(false);
    expect(sameJson({ a: undefined }, {})).toBe(false);
    expect(sameJson(new Date(0), new Date(1))).toBe(false);
    const when = new Date(0);
    expect(sameJson({ when }, { when })).toBe(true);
    expect(sameJson([1, [2]], [1, [2]])).toBe(true);
    expect(sameJson([1, [2]], { 0: 1, 1: [2] })).toBe(false);
  });
});
