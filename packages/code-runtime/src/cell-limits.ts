import { CellLimitsError } from './cell-limits-error.js';

/** The plain values of a {@link CellLimits}; every field is an integer. */
export interface CellLimitValues {
  /** Wall-clock time a cell may take, from start to settlement, in milliseconds. */
  readonly deadlineMs: number;
  /** Upper bound of the cell's whole WebAssembly memory (QuickJS included), in bytes. */
  readonly memoryBytes: number;
  /** QuickJS stack limit, in bytes. */
  readonly stackBytes: number;
  /** UTF-8 size of the cell's source, in bytes. */
  readonly maxSourceBytes: number;
  /** UTF-8 size of everything written by `text()` and `console.*`, in bytes. */
  readonly maxOutputBytes: number;
  /** Host calls a cell may start: tool calls plus `notify()` calls. */
  readonly maxHostCalls: number;
  /** Tool calls that may be in flight at the same time. */
  readonly maxHostCallsInFlight: number;
  /** JSON size of one tool call's input (or one notification message), in bytes. */
  readonly maxCallInputBytes: number;
  /** JSON size of one tool call's result, in bytes. */
  readonly maxCallOutputBytes: number;
  /** Timers (`setTimeout`) pending at the same time. */
  readonly maxTimers: number;
}

/** The name of one limit; `limit_exceeded` results carry it. */
export type CellLimitName = keyof CellLimitValues;

const KIB = 1024;
const MIB = 1024 * KIB;

/**
 * Allowed range of every field. The memory floor is the 16 MiB the QuickJS
 * module itself starts with plus headroom; the stack ceiling stays well below
 * the host's own stack, which QuickJS frames share.
 */
const RANGES: Readonly<Record<CellLimitName, readonly [number, number]>> = {
  deadlineMs: [1, 600_000],
  memoryBytes: [20 * MIB, 1024 * MIB],
  stackBytes: [16 * KIB, 512 * KIB],
  maxSourceBytes: [1, 16 * MIB],
  maxOutputBytes: [0, 64 * MIB],
  maxHostCalls: [0, 1_000_000],
  maxHostCallsInFlight: [1, 1024],
  maxCallInputBytes: [2, 64 * MIB],
  maxCallOutputBytes: [2, 64 * MIB],
  maxTimers: [0, 10_000],
};

const DEFAULTS: CellLimitValues = {
  deadlineMs: 5_000,
  memoryBytes: 64 * MIB,
  stackBytes: 128 * KIB,
  maxSourceBytes: 64 * KIB,
  maxOutputBytes: 64 * KIB,
  maxHostCalls: 100,
  maxHostCallsInFlight: 8,
  maxCallInputBytes: 64 * KIB,
  maxCallOutputBytes: 256 * KIB,
  maxTimers: 32,
};

/**
 * The hard limits of a cell. Build them from the strict defaults and override
 * only what you need; an override is validated field by field and a bad one
 * throws {@link CellLimitsError} naming the field — nothing is silently ignored.
 *
 * | field | default |
 * |---|---|
 * | deadlineMs | 5,000 |
 * | memoryBytes | 64 MiB |
 * | stackBytes | 128 KiB |
 * | maxSourceBytes | 64 KiB |
 * | maxOutputBytes | 64 KiB |
 * | maxHostCalls | 100 |
 * | maxHostCallsInFlight | 8 |
 * | maxCallInputBytes | 64 KiB |
 * | maxCallOutputBytes | 256 KiB |
 * | maxTimers | 32 |
 *
 * @example
 * ```ts
 * const limits = CellLimits.from({ deadlineMs: 10_000, maxHostCalls: 1_000 });
 * const stricter = limits.with({ memoryBytes: 32 * 1024 * 1024 });
 * ```
 */
export class CellLimits implements CellLimitValues {
  readonly deadlineMs: number;
  readonly memoryBytes: number;
  readonly stackBytes: number;
  readonly maxSourceBytes: number;
  readonly maxOutputBytes: number;
  readonly maxHostCalls: number;
  readonly maxHostCallsInFlight: number;
  readonly maxCallInputBytes: number;
  readonly maxCallOutputBytes: number;
  readonly maxTimers: number;

  private constructor(values: CellLimitValues) {
    this.deadlineMs = values.deadlineMs;
    this.memoryBytes = values.memoryBytes;
    this.stackBytes = values.stackBytes;
    this.maxSourceBytes = values.maxSourceBytes;
    this.maxOutputBytes = values.maxOutputBytes;
    this.maxHostCalls = values.maxHostCalls;
    this.maxHostCallsInFlight = values.maxHostCallsInFlight;
    this.maxCallInputBytes = values.maxCallInputBytes;
    this.maxCallOutputBytes = values.maxCallOutputBytes;
    this.maxTimers = values.maxTimers;
    Object.freeze(this);
  }

  /** The strict defaults (see the table above). */
  static default(): CellLimits {
    return new CellLimits(DEFAULTS);
  }

  /**
   * The defaults with `overrides` applied.
   * @throws {CellLimitsError} for an unknown field or a value out of range.
   */
  static from(overrides: Partial<CellLimitValues>): CellLimits {
    return CellLimits.default().with(overrides);
  }

  /** The allowed range `[min, max]` (inclusive) of a field. */
  static range(field: CellLimitName): readonly [number, number] {
    return RANGES[field];
  }

  /**
   * A copy of these limits with `overrides` applied.
   * @throws {CellLimitsError} for an unknown field or a value out of range.
   */
  with(overrides: Partial<CellLimitValues>): CellLimits {
    if (typeof overrides !== 'object' || overrides === null) {
      throw new CellLimitsError('(overrides)', 'cell limit overrides must be an object of numeric fields');
    }
    const next: Record<string, number> = { ...this.toJSON() };
    for (const [field, value] of Object.entries(overrides)) {
      if (!Object.hasOwn(RANGES, field)) {
        throw new CellLimitsError(
          field,
          `unknown cell limit "${field}": use one of ${Object.keys(RANGES).join(', ')}`,
        );
      }
      const [min, max] = RANGES[field as CellLimitName];
      if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
        throw new CellLimitsError(
          field,
          `cell limit "${field}" must be an integer from ${min} to ${max}, got ${String(value)}`,
        );
      }
      next[field] = value;
    }
    return new CellLimits(next as unknown as CellLimitValues);
  }

  /** The plain values, e.g. for logging. */
  toJSON(): CellLimitValues {
    return {
      deadlineMs: this.deadlineMs,
      memoryBytes: this.memoryBytes,
      stackBytes: this.stackBytes,
      maxSourceBytes: this.maxSourceBytes,
      maxOutputBytes: this.maxOutputBytes,
      maxHostCalls: this.maxHostCalls,
      maxHostCallsInFlight: this.maxHostCallsInFlight,
      maxCallInputBytes: this.maxCallInputBytes,
      maxCallOutputBytes: this.maxCallOutputBytes,
      maxTimers: this.maxTimers,
    };
  }
}
