import canonicalizeModule from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../src/index.ts';

type Serialize = (value: unknown) => string | undefined;
// The scheme's reference implementation, kept as the oracle of ours.
const canonicalize: Serialize =
  (canonicalizeModule as unknown as { default?: Serialize }).default ??
  (canonicalizeModule as unknown as Serialize);

/** JSON values with every kind of string: lone surrogates, controls, keys that sort by code unit. */
const value = fc.letrec((tie) => ({
  leaf: fc.oneof(
    fc.string({ unit: 'binary' }),
    fc.string({ unit: 'grapheme-composite' }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
  ),
  node: fc.oneof(
    { depthSize: 'small' },
    tie('leaf'),
    fc.array(tie('node'), { maxLength: 5 }),
    // Keys that sort by code unit, and array indexes, which objects enumerate first.
    fc.dictionary(fc.oneof(fc.string({ unit: 'binary', maxLength: 6 }), fc.nat().map(String)), tie('node'), {
      maxKeys: 6,
    }),
  ),
})).node;

describe('canonicalJson', () => {
  it('writes the reference implementation’s text for every JSON value', () => {
    fc.assert(
      fc.property(value, (json) => {
        expect(canonicalJson(json)).toBe(canonicalize(json));
      }),
      { numRuns: 2000 },
    );
  });

  it('orders an object’s keys as the reference does, with few keys or many', () => {
    const wide = fc.dictionary(
      fc.string({ unit: 'binary', maxLength: 4 }),
      fc.array(fc.integer(), { maxLength: 2 }),
      {
        maxKeys: 40,
      },
    );
    fc.assert(
      fc.property(wide, (json) => {
        expect(canonicalJson(json)).toBe(canonicalize(json));
      }),
      { numRuns: 1000 },
    );
  });

  it('treats what JSON has no form for as the reference does: toJSON asked, undefined left out or null', () => {
    const odd = {
      when: new Date(0),
      gone: undefined,
      list: [undefined, Symbol('s'), 1],
      nested: { toJSON: () => ({ b: 2, a: 1 }) },
    };
    expect(canonicalJson(odd)).toBe(canonicalize(odd));
    expect(canonicalJson(odd)).toBe(
      '{"list":[null,null,1],"nested":{"a":1,"b":2},"when":"1970-01-01T00:00:00.000Z"}',
    );
    const indexed = { 10: 'ten', 9: 'nine', b: [{ 2: 0, 1: 0 }], a: 1 };
    expect(canonicalJson(indexed)).toBe('{"10":"ten","9":"nine","a":1,"b":[{"1":0,"2":0}]}');
    expect(canonicalJson(indexed)).toBe(canonicalize(indexed));
    expect(() => canonicalJson(undefined)).toThrow(expect.objectContaining({ code: 'not_json' }));
    expect(() => canonicalJson({ a: Number.NaN })).toThrow('NaN is not allowed');
    expect(() => canonicalJson([Number.POSITIVE_INFINITY])).toThrow('Infinity is not allowed');
    expect(() => canonicalJson({ a: 1n })).toThrow(TypeError);
  });
});
