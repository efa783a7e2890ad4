import {
  callInputDigest,
  type FactOf,
  type JsonValue,
  type RuntimeEvent,
  ToolError,
} from '@factum/agent-facts';
import { ToolCatalog, ToolHandler } from '@factum/tools';

/** A call as the recorded run made it, and how it ended there. */
export type RecordedCall = {
  readonly operationId: string;
  readonly name: string;
  readonly inputDigest: string;
  /** The call's T2, when the recorded run settled it. */
  readonly settled?: { readonly fact: FactOf<'tool_settled'>; readonly eventId: string };
  /** Its progress notes, in order. */
  readonly notes: readonly string[];
};

/** A call the replay made that no recorded call matched: it did not run. */
export type UnmatchedCall = {
  readonly operationId: string;
  readonly name: string;
  readonly inputDigest: string;
};

/** The recorded calls of one invocation (its T1s, in log order, with their T2 and notes). */
export function recordedCalls(events: readonly RuntimeEvent[]): RecordedCall[] {
  const calls: RecordedCall[] = [];
  const byOperation = new Map<string, { -readonly [K in keyof RecordedCall]: RecordedCall[K] }>();
  for (const event of events) {
    const fact = event.fact;
    if (fact.kind === 'tool_dispatched') {
      const call = {
        operationId: fact.operationId,
        name: fact.call.name,
        inputDigest: callInputDigest(fact.call.input),
        notes: [] as string[],
      };
      byOperation.set(fact.operationId, call);
      calls.push(call);
    } else if (fact.kind === 'tool_notified') {
      (byOperation.get(fact.operationId)?.notes as string[] | undefined)?.push(fact.message);
    } else if (fact.kind === 'tool_settled') {
      const call = byOperation.get(fact.operationId);
      if (call !== undefined) call.settled = { fact, eventId: event.id };
    }
  }
  return calls;
}

/** Reads a recorded tool result (from the source log) by the id of the event that settled it. */
export type RecordedResultReader = (eventId: string) => Promise<unknown>;

/**
 * Serves recorded outcomes in place of the tools: a call matches the next unused
 * recorded call with the same tool name and input digest, in order, and gets that
 * call's recorded outcome — its notes, then its result or its failure, or an unknown
 * outcome when the recorded run never settled it. No real tool ever runs: a call
 * nothing matches is answered `unavailable` and listed in `unmatched`.
 */
export class RecordedCalls {
  readonly #calls: readonly RecordedCall[];
  readonly #used = new Set<number>();
  readonly #read: RecordedResultReader;
  readonly served: RecordedCall[] = [];
  readonly unmatched: UnmatchedCall[] = [];
  #cursor = 0;

  constructor(calls: readonly RecordedCall[], read: RecordedResultReader) {
    this.#calls = calls;
    this.#read = read;
  }

  /** The recorded calls nothing in the replay asked for. */
  get unused(): RecordedCall[] {
    return this.#calls.filter((_, index) => !this.#used.has(index));
  }

  async serve(
    name: string,
    input: unknown,
    context: { operationId: string; notify(message: string): Promise<void> },
  ): Promise<unknown> {
    const inputDigest = callInputDigest(input as JsonValue);
    const index = this.#match(name, inputDigest);
    if (index === undefined) {
      this.unmatched.push({ operationId: context.operationId, name, inputDigest });
      throw new ToolError(
        'unavailable',
        `${name} is unavailable in replay: no recorded call made it with this input, and replay runs no new effect`,
      );
    }
    const call = this.#calls[index]!;
    this.#used.add(index);
    this.#cursor = index + 1;
    this.served.push(call);
    for (const note of call.notes) await context.notify(note);
    const settled = call.settled;
    if (settled === undefined) {
      throw new ToolError(
        'outcome_unknown',
        `the recorded ${name} call never settled: its outcome is unknown`,
      );
    }
    const outcome = settled.fact.outcome;
    if (outcome.kind === 'failed') {
      // The recorded code is kept as is: the tools layer stores a ToolError's own code.
      throw new ToolError(outcome.error.code as ToolError['code'], outcome.error.message);
    }
    return this.#read(settled.eventId);
  }

  #match(name: string, inputDigest: string): number | undefined {
    for (let index = this.#cursor; index < this.#calls.length; index += 1) {
      const call = this.#calls[index]!;
      if (!this.#used.has(index) && call.name === name && call.inputDigest === inputDigest) return index;
    }
    return undefined;
  }
}

/**
 * The catalog the replay runs with: the app's own registrations (schemas, approval
 * rules, nesting, recovery policies — what the model is told and what the tools layer
 * checks), each with its executor replaced by `served`.
 */
export function servedCatalog(catalog: ToolCatalog, served: () => RecordedCalls): ToolCatalog {
  const executor = {
    names: () => catalog.names(),
    invoke: (
      name: string,
      input: unknown,
      context: { operationId: string; notify(m: string): Promise<void> },
    ) => served().serve(name, input, context),
  };
  return new ToolCatalog(
    catalog.names().map((name) => ({
      ...catalog.get(name)!.registration,
      handler: ToolHandler.immediate(executor),
    })),
  );
}
