import type { CellLimitName } from './cell-limits.js';

/** A `console.*` line written by a cell. */
export interface CellLogEntry {
  readonly level: 'log' | 'info' | 'warn' | 'error';
  readonly message: string;
}

/** Counts of the host calls (tool calls and notifications) of one cell. */
export interface CellHostCallCounts {
  /** Host calls the cell started. */
  readonly started: number;
  /** Host calls that settled before the result was returned; always equals `started`. */
  readonly settled: number;
}

/** Fields every result carries. */
export interface CellResultBase {
  /** Everything `text()` wrote, one call per line. */
  readonly output: string;
  /** Captured `console.*` lines. */
  readonly logs: readonly CellLogEntry[];
  /** The `notify()` messages the cell sent, in order. */
  readonly notifications: readonly string[];
  /** Books on the host calls: a cell settles only after all of them settled. */
  readonly hostCalls: CellHostCallCounts;
  /** Wall-clock time of the cell, in milliseconds. */
  readonly durationMs: number;
}

/** The JavaScript error that ended a `failed` cell. */
export interface CellError {
  /** `name` of the thrown error (`"Error"` for a non-error value). */
  readonly name: string;
  readonly message: string;
  /** 1-based line in the cell's source, when known. */
  readonly line?: number;
  /** The QuickJS stack trace, when there is one. */
  readonly stack?: string;
}

/** The host call that failed fatally. */
export interface CellFatalCall {
  readonly kind: 'tool' | 'notify';
  /** The tool's name, or `"notify"`. */
  readonly name: string;
  /** Zero-based index of the call among all host calls of the cell. */
  readonly index: number;
}

/** The cell's async body settled normally. */
export interface CellCompleted extends CellResultBase {
  readonly kind: 'completed';
}
/** The cell threw (or rejected with) an error it did not catch, or did not compile. */
export interface CellFailed extends CellResultBase {
  readonly kind: 'failed';
  readonly error: CellError;
}
/** The cell ran past `deadlineMs`. */
export interface CellTimedOut extends CellResultBase {
  readonly kind: 'timed_out';
}
/** The cell ran out of its `memoryBytes`. */
export interface CellOutOfMemory extends CellResultBase {
  readonly kind: 'out_of_memory';
}
/** The caller's signal aborted; `before` says no JavaScript ran. */
export interface CellCancelled extends CellResultBase {
  readonly kind: 'cancelled';
  readonly phase: 'before' | 'during';
}
/** The bridge failed with a {@link FatalHostError}; `cause` is that error. */
export interface CellFatal extends CellResultBase {
  readonly kind: 'fatal';
  readonly call: CellFatalCall;
  readonly cause: unknown;
}
/** A limit other than the deadline and memory was hit; `limit` names it. */
export interface CellLimitExceeded extends CellResultBase {
  readonly kind: 'limit_exceeded';
  readonly limit: CellLimitName;
  readonly message: string;
}

/** How a cell ended: a discriminated union on `kind`. */
export type CellResult =
  | CellCompleted
  | CellFailed
  | CellTimedOut
  | CellOutOfMemory
  | CellCancelled
  | CellFatal
  | CellLimitExceeded;

/** The `kind` of a {@link CellResult}. */
export type CellResultKind = CellResult['kind'];
