import { describe, expect, test } from 'vitest';
import { CellLimits, CellLimitsError, CodeExecutor, CodeRuntimeError } from '../src/index.js';

describe('CellLimits', () => {
  test('defaults are strict and documented values', () => {
    expect(CellLimits.default().toJSON()).toEqual({
      deadlineMs: 5_000,
      memoryBytes: 64 * 1024 * 1024,
      stackBytes: 128 * 1024,
      maxSourceBytes: 64 * 1024,
      maxOutputBytes: 64 * 1024,
      maxHostCalls: 100,
      maxHostCallsInFlight: 8,
      maxCallInputBytes: 64 * 1024,
      maxCallOutputBytes: 256 * 1024,
      maxTimers: 32,
    });
  });

  test('an override replaces only the fields it names', () => {
    const limits = CellLimits.from({ deadlineMs: 1234 }).with({ maxHostCalls: 7 });
    expect(limits.deadlineMs).toBe(1234);
    expect(limits.maxHostCalls).toBe(7);
    expect(limits.memoryBytes).toBe(CellLimits.default().memoryBytes);
  });

  test.each([
    [{ deadlineMs: 0 }, 'deadlineMs'],
    [{ deadlineMs: 1.5 }, 'deadlineMs'],
    [{ memoryBytes: 1024 }, 'memoryBytes'],
    [{ stackBytes: 64 * 1024 * 1024 }, 'stackBytes'],
    [{ maxHostCalls: -1 }, 'maxHostCalls'],
    [{ maxCallInputBytes: '1' as unknown as number }, 'maxCallInputBytes'],
    [{ deadlineMS: 10 } as never, 'deadlineMS'],
  ])('a bad override %o is refused with a typed error naming %s', (override, field) => {
    let caught: unknown;
    try {
      CellLimits.from(override);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CellLimitsError);
    expect(CodeRuntimeError.isInstance(caught)).toBe(true);
    expect((caught as CellLimitsError).code).toBe('invalid_cell_limits');
    expect((caught as CellLimitsError).field).toBe(field);
    expect((caught as Error).message).toContain(field);
  });

  test('the executor refuses limits that are not a CellLimits', () => {
    expect(() => new CodeExecutor({ deadlineMs: 10 } as never)).toThrow(CellLimitsError);
  });
});
