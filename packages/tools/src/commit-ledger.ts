import {
  CommitError,
  type EventOrigin,
  type EventSink,
  EventWrite,
  type Fact,
  type Invocation,
  RuntimeEvent,
  ToolError,
  type ToolResult,
} from '@factum/agent-facts';

/**
 * Every commit a run's tools make goes through here. A failed commit becomes a
 * `ToolError('persistence')` and is remembered, so `shutdown()` can report it even if
 * the error was swallowed above (a cell's JS `catch`, say). It also keeps every call
 * in flight, so shutdown waits for effects still finishing.
 */
export class CommitLedger {
  readonly #sink: EventSink;
  readonly #invocation: Invocation;
  readonly #origin: EventOrigin;
  readonly #failures: ToolError[] = [];
  readonly #inFlight = new Set<Promise<unknown>>();

  constructor(sink: EventSink, invocation: Invocation, origin: EventOrigin = {}) {
    this.#sink = sink;
    this.#invocation = invocation;
    this.#origin = origin;
  }

  /** The invocation every fact of this ledger belongs to. */
  get invocation(): Invocation {
    return this.#invocation;
  }

  /** Commits a fact (with its result, when it settles a success); throws persistence on failure. */
  async commit(fact: Fact, result?: ToolResult): Promise<RuntimeEvent> {
    const event = RuntimeEvent.create(this.#invocation, fact, this.#origin);
    const write = result === undefined ? EventWrite.plain(event) : EventWrite.withResult(event, result);
    try {
      await this.#sink.commit(write);
      return event;
    } catch (error) {
      const outcome = CommitError.isInstance(error) ? error.outcome : 'outcome_unknown';
      const failure = new ToolError(
        'persistence',
        `the ${fact.kind} of operation ${'operationId' in fact ? fact.operationId : '?'} was not confirmed durable (${outcome}); its effect is never reported as success`,
        { cause: error },
      );
      this.#failures.push(failure);
      throw failure;
    }
  }

  /**
   * Records a fact that need not be durable before the run's next waited-for commit
   * (which carries it, in order), when the sink can hold it; else commits it now.
   */
  async defer(fact: Fact, result?: ToolResult): Promise<RuntimeEvent> {
    if (this.#sink.defer === undefined) return this.commit(fact, result);
    const event = RuntimeEvent.create(this.#invocation, fact, this.#origin);
    this.#sink.defer(result === undefined ? EventWrite.plain(event) : EventWrite.withResult(event, result));
    return event;
  }

  /**
   * The store's clock (see `EventSink.databaseNow`), or the host's for a sink without
   * one; a store that cannot say is a `ToolError('persistence')`.
   */
  async databaseNow(): Promise<number> {
    if (this.#sink.databaseNow === undefined) return Date.now();
    try {
      return await this.#sink.databaseNow();
    } catch (error) {
      throw new ToolError('persistence', `cannot read the log's clock for a deadline: ${String(error)}`, {
        cause: error,
      });
    }
  }

  /** Whether the sink allows an effect to start now (see `EventSink.mayStartEffect`). */
  mayStartEffect(dispatch?: RuntimeEvent): boolean {
    return this.#sink.mayStartEffect?.(dispatch) !== false;
  }

  /**
   * Throws, and remembers, a `ToolError('persistence')` unless the sink allows an effect
   * to start now (see `EventSink.mayStartEffect`): asked after a T1 resolved and before
   * its effect starts. The operation stays dispatched and unsettled — uncertain, for
   * recovery — and its effect never starts.
   */
  checkEffectStart(dispatch: RuntimeEvent, operationId: string): void {
    if (this.mayStartEffect(dispatch)) return;
    const failure = new ToolError(
      'persistence',
      `the lease of this host may have lapsed by the time the T1 of operation ${operationId} was confirmed: its effect was not started, and the operation is left to recovery`,
    );
    this.#failures.push(failure);
    throw failure;
  }

  /** Runs `work` as a tracked call: shutdown waits for it. */
  track<T>(work: Promise<T>): Promise<T> {
    this.#inFlight.add(work);
    const forget = () => this.#inFlight.delete(work);
    work.then(forget, forget);
    return work;
  }

  /** Waits for every tracked call, then throws the first persistence failure, if any. */
  async settle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
    const [first] = this.#failures;
    if (first !== undefined) {
      throw new ToolError(
        'persistence',
        `${this.#failures.length} commit(s) of this run's tools failed; the affected operations are uncertain`,
        { cause: first },
      );
    }
  }
}
