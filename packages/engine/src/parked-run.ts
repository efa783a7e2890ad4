import type { FactOf, Invocation, ToolCall } from '@factum/agent-facts';
import type { SessionEvent } from './context-projection.js';

/** Where an operation of a parked run stands, across the whole session. */
export type ParkedState =
  /** Not dispatched, not rejected: waits for a decision or for its continuation. */
  | 'waiting'
  /** Dispatched and never settled or reconciled: uncertain, a person must resolve it. */
  | 'uncertain'
  /** Settled, rejected or reconciled: carried out, nothing left to do. */
  | 'closed';

/** One call a parked run waits on. */
export type ParkedOperation = {
  readonly operationId: string;
  readonly call: ToolCall;
  readonly inputDigest: string;
  readonly reason: string;
  readonly expiresAt?: string;
  readonly decision?: FactOf<'approval_decided'>;
  readonly state: ParkedState;
};

/** An invocation that ended `approval_pending`, and what became of its calls. */
export type ParkedRun = {
  readonly invocation: Invocation;
  /** Sequence of its `invocation_ended`. */
  readonly endSequence: number;
  /** Sequence of its last event (decisions come after the end). */
  readonly lastSequence: number;
  readonly operations: readonly ParkedOperation[];
};

/**
 * The parked run `invocationId` of a session's events, or `undefined` if that
 * invocation did not end `approval_pending`. An operation's dispatch, settlement or
 * rejection may be in any invocation of the session (a continuation writes them in its
 * own), so they are looked up by operation id across the session.
 */
export function parkedRunOf(events: readonly SessionEvent[], invocationId: string): ParkedRun | undefined {
  let ended: { sequence: number; operations: readonly string[] } | undefined;
  let invocation: Invocation | undefined;
  let lastSequence = 0;
  const requested = new Map<string, FactOf<'approval_requested'>>();
  const decided = new Map<string, FactOf<'approval_decided'>>();
  for (const { sequence, event } of events) {
    if (event.invocation.invocationId !== invocationId) continue;
    invocation = event.invocation;
    lastSequence = sequence;
    const fact = event.fact;
    if (fact.kind === 'approval_requested') requested.set(fact.operationId, fact);
    if (fact.kind === 'approval_decided') decided.set(fact.operationId, fact);
    if (fact.kind === 'invocation_ended' && fact.outcome.kind === 'approval_pending') {
      ended = { sequence, operations: fact.outcome.operations };
    }
  }
  if (ended === undefined || invocation === undefined) return undefined;
  const states = statesOf(events, new Set(ended.operations));
  const operations = ended.operations.flatMap((operationId): ParkedOperation[] => {
    const request = requested.get(operationId);
    if (request === undefined) return [];
    const decision = decided.get(operationId);
    return [
      {
        operationId,
        call: request.call,
        inputDigest: request.inputDigest,
        reason: request.reason,
        ...(request.expiresAt === undefined ? {} : { expiresAt: request.expiresAt }),
        ...(decision === undefined ? {} : { decision }),
        state: states.get(operationId) ?? 'waiting',
      },
    ];
  });
  return { invocation, endSequence: ended.sequence, lastSequence, operations };
}

/**
 * The last invocation of the session that ended parked with a call still waiting. Three
 * passes over the history, however many runs parked before: the runs that ended parked
 * and the calls each asked a person about, the states of all those calls at once, then
 * the chosen run (looking at each parked run in turn took two passes a run).
 */
export function waitingParkedRun(events: readonly SessionEvent[]): ParkedRun | undefined {
  // By invocation, in the order each first ended parked, with the calls of its last such end.
  const parked = new Map<string, readonly string[]>();
  const asked = new Set<string>();
  for (const { event } of events) {
    const fact = event.fact;
    if (fact.kind === 'approval_requested')
      asked.add(askedKey(event.invocation.invocationId, fact.operationId));
    if (fact.kind === 'invocation_ended' && fact.outcome.kind === 'approval_pending') {
      parked.set(event.invocation.invocationId, fact.outcome.operations);
    }
  }
  if (parked.size === 0) return undefined;
  const states = statesOf(events, new Set([...parked.values()].flat()));
  for (const [invocationId, operations] of [...parked].reverse()) {
    // A call is listed only if the run asked about it (see `parkedRunOf`), and waits while
    // nothing dispatched, rejected or settled it.
    const waits = operations.some(
      (operationId) => asked.has(askedKey(invocationId, operationId)) && !states.has(operationId),
    );
    if (waits) return parkedRunOf(events, invocationId);
  }
  return undefined;
}

function askedKey(invocationId: string, operationId: string): string {
  return `${invocationId}\n${operationId}`;
}

function statesOf(
  events: readonly SessionEvent[],
  operations: ReadonlySet<string>,
): Map<string, ParkedState> {
  const states = new Map<string, ParkedState>();
  for (const { event } of events) {
    const fact = event.fact;
    if (!('operationId' in fact) || !operations.has(fact.operationId)) continue;
    if (fact.kind === 'tool_dispatched' && states.get(fact.operationId) !== 'closed') {
      states.set(fact.operationId, 'uncertain');
    }
    if (fact.kind === 'tool_settled' || fact.kind === 'tool_rejected') states.set(fact.operationId, 'closed');
    if (fact.kind === 'tool_reconciled' && fact.decision.kind !== 'unknown') {
      states.set(fact.operationId, 'closed');
    }
  }
  return states;
}
