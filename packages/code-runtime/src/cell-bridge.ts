/** One tool call made by a cell, as the host sees it. */
export interface CellHostCall {
  /** The tool's name, one of {@link CellBridge.tools}. */
  readonly name: string;
  /** The input, already parsed from JSON (so plain data only). */
  readonly input: unknown;
  /** Zero-based index of this host call among all host calls of the cell. */
  readonly index: number;
  /** Aborted when the cell is terminated while this call is in flight. */
  readonly signal: AbortSignal;
}

/** One `notify(message)` made by a cell. */
export interface CellNotification {
  /** The progress message. */
  readonly message: string;
  /** Zero-based index of this host call among all host calls of the cell. */
  readonly index: number;
  /** Aborted when the cell is terminated before the notification settled. */
  readonly signal: AbortSignal;
}

/**
 * What a cell can reach of the host: the names of its tools, a function that
 * runs one tool call, and an optional sink for progress notifications.
 *
 * Results and inputs cross as JSON. A rejection becomes a catchable JS error in
 * the cell — unless it is a {@link FatalHostError}, which terminates the cell at
 * once (JS `catch`/`finally` never run) and yields a `fatal` result.
 */
export interface CellBridge {
  /** Tool names exposed as `tools.<name>(input)`. */
  readonly tools: readonly string[];
  /** Run one tool call; resolve with a JSON-serialisable value. */
  call(call: CellHostCall): Promise<unknown>;
  /**
   * Deliver one progress message. Messages are delivered one at a time, in the
   * order the cell sent them. Without it, `notify()` only records the message.
   */
  notify?(notification: CellNotification): Promise<void>;
}
