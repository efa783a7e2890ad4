import type { RuntimeEvent } from '@factum/agent-facts';

/** What another writer recorded that closed an operation, or took its next attempt. */
export type ClosedBy = {
  readonly sequence: number;
  readonly eventId: string;
  readonly at: string;
  readonly kind: 'tool_settled' | 'tool_reconciled' | 'tool_redispatched';
  /** The decision or outcome it recorded (`succeeded`, `failed`), when it closed the operation. */
  readonly outcome?: string;
  readonly policy?: string;
  readonly attempt?: number;
};

/**
 * The event that beat a reconciler to an operation: the one that closed it, or else a
 * re-dispatch past the attempt the reconciler started from.
 */
export function closerOf(
  events: readonly { readonly sequence: number; readonly event: RuntimeEvent }[],
  operationId: string,
  fromAttempt: number,
): ClosedBy | undefined {
  let redispatch: ClosedBy | undefined;
  for (const { sequence, event } of events) {
    const fact = event.fact;
    if (!('operationId' in fact) || fact.operationId !== operationId) continue;
    const base = { sequence, eventId: event.id, at: event.timestamp };
    if (fact.kind === 'tool_settled') return { ...base, kind: fact.kind, outcome: fact.outcome.kind };
    if (fact.kind === 'tool_reconciled' && fact.decision.kind !== 'unknown') {
      return {
        ...base,
        kind: fact.kind,
        outcome: fact.decision.kind,
        policy: fact.policy,
        ...(fact.attempt === undefined ? {} : { attempt: fact.attempt }),
      };
    }
    if (fact.kind === 'tool_redispatched' && fact.attempt > fromAttempt && redispatch === undefined) {
      redispatch = { ...base, kind: fact.kind, attempt: fact.attempt };
    }
  }
  return redispatch;
}

/** One line for a person: what the other writer recorded, and when. */
export function describeCloser(closer: ClosedBy): string {
  const what =
    closer.kind === 'tool_redispatched'
      ? `attempt ${closer.attempt} was already recorded`
      : `${closer.kind}${closer.policy ? ` (${closer.policy})` : ''} ${closer.outcome}${closer.attempt ? ` at attempt ${closer.attempt}` : ''}`;
  return `${what} — event ${closer.eventId}, sequence ${closer.sequence}, ${closer.at}`;
}
