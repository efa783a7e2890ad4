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

/** The last invocation of the session that ended parked with a call still waiting. */
export function waitingParkedRun(events: readonly SessionEvent[]): ParkedRun | undefined {
  const candidates = new Set<string>();
  for (const { event } of events) {
    const fact = event.fact;
    if (fact.kind === 'invocation_ended' && fact.outcome.kind === 'approval_pending') {
      candidates.add(event.invocation.invocationId);
    }
  }
  for (const invocationId of [...candidates].reverse()) {
    const parked = parkedRunOf(events, invocationId);
    if (parked?.operations.some((operation) => operation.state === 'waiting')) return parked;
  }
  return undefined;
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
