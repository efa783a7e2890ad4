import { describe, expect, it } from 'vitest';
import { FactParseError, RuntimeEvent } from '../src/index.ts';

const invocation = { sessionId: 's', turnId: 't', runId: 'r', invocationId: 'i' };
const dispatch = (input: unknown) =>
  RuntimeEvent.create(invocation, {
    kind: 'tool_dispatched',
    operationId: 's1:c1',
    call: { id: 'c1', name: 'echo', input: input as never, origin: { kind: 'provider', stepId: 's1' } },
  });

describe('RuntimeEvent.ensure', () => {
  it('returns an event create made as it is, its envelope frozen and its JSON input left to the caller', () => {
    const input = { path: '/tmp/x', lines: [1, 2] };
    const event = dispatch(input);
    expect(RuntimeEvent.ensure(event)).toBe(event);
    expect(Object.isFrozen(event)).toBe(true);
    expect(Object.isFrozen(event.invocation)).toBe(true);
    expect(Object.isFrozen(event.fact)).toBe(true);
    if (event.fact.kind !== 'tool_dispatched') throw new Error('unreachable');
    expect(Object.isFrozen(event.fact.call.origin)).toBe(true);
    // The tool input is the caller's own object, passed through: not frozen, not copied.
    expect(event.fact.call.input).toBe(input);
    expect(Object.isFrozen(input)).toBe(false);
    expect(() => {
      (event.fact as { kind: string }).kind = 'bogus';
    }).toThrow(TypeError);
    expect(() => {
      (event.invocation as { sessionId: string }).sessionId = '';
    }).toThrow(TypeError);
  });

  it('checks again a JSON input the caller changed after create, with the same error as parse', () => {
    const input: Record<string, unknown> = { ok: true };
    const event = dispatch(input);
    input.when = new Date(0);
    expect(() => RuntimeEvent.ensure(event)).toThrow(FactParseError);
    const viaParse = (() => {
      try {
        RuntimeEvent.parse(event);
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(() => RuntimeEvent.ensure(event)).toThrow(viaParse!);
    input.when = Number.NaN;
    expect(() => RuntimeEvent.ensure(event)).toThrow(FactParseError);
    delete input.when;
    expect(RuntimeEvent.ensure(event)).toBe(event);
  });

  it('parses in full anything create did not make: a copy, a look-alike, a forged field', () => {
    const event = dispatch({ ok: true });
    const copy = structuredClone(event);
    expect(RuntimeEvent.ensure(copy)).toEqual(event);
    expect(RuntimeEvent.ensure(copy)).not.toBe(copy);
    const forged = { ...structuredClone(event), fact: { kind: 'bogus' } };
    expect(() => RuntimeEvent.ensure(forged)).toThrow(FactParseError);
    const extra = { ...structuredClone(event), extra: 1 };
    expect(() => RuntimeEvent.ensure(extra)).toThrow(FactParseError);
    expect(() => RuntimeEvent.ensure(null)).toThrow(FactParseError);
    expect(() => RuntimeEvent.ensure('event')).toThrow(FactParseError);
  });

  it('leaves the parse of an event made with parse later to whoever takes it: a log parses it in full', () => {
    const later = { parse: 'later' as const, now: () => new Date(0), id: () => 'e1' };
    const fact = {
      kind: 'tool_dispatched',
      operationId: 's1:c1',
      call: { id: 'c1', name: 'echo', input: { ok: true }, origin: { kind: 'provider', stepId: 's1' } },
    } as const;
    const event = RuntimeEvent.create(invocation, fact, later);
    expect(event.fact).toBe(fact);
    expect(Object.isFrozen(event)).toBe(false);
    const parsed = RuntimeEvent.ensure(event);
    expect(parsed).not.toBe(event);
    expect(parsed).toEqual(RuntimeEvent.create(invocation, fact, { now: later.now, id: later.id }));
    const bad = RuntimeEvent.create(invocation, { ...fact, operationId: '' }, later);
    expect(bad.fact).toMatchObject({ operationId: '' });
    expect(() => RuntimeEvent.ensure(bad)).toThrow(FactParseError);
    expect(() => RuntimeEvent.create(invocation, { ...fact, operationId: '' })).toThrow(FactParseError);
  });
});
