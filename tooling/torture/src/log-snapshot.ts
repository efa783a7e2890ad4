import type { Invocation } from '@factum/agent-facts';
import type { ChainReport, EventLog, InvocationRecovery, StoredEvent } from '@factum/event-log';

/** Everything the checks read from a reopened log. */
export type LogSnapshot = {
  readonly chain: ChainReport;
  readonly events: readonly StoredEvent[];
  readonly unfinished: readonly Invocation[];
  /** What `invocationRecovery` says, for every invocation the checks need it for. */
  readonly recoveries: ReadonlyMap<string, InvocationRecovery>;
};

export const wideBounds = { maxEvents: 1_000_000, maxBytes: 512 * 1024 * 1024 };

/**
 * Reads the log as recovery would see it. `invocationRecovery` is asked about every
 * invocation with an operation still open and every invocation the last child touched
 * (past `since`): older closed ones cannot change, and asking about each of them after
 * every kill would make the run quadratic.
 */
export async function takeSnapshot(log: EventLog, since: number): Promise<LogSnapshot> {
  const chain = await log.verifyChain();
  const events = (await log.prefix(wideBounds)).events;
  const unfinished = await log.unfinishedInvocations(100_000);
  const open = new Map<string, Invocation>();
  const closed = new Set<string>();
  for (const { event } of [...events].reverse()) {
    const fact = event.fact;
    if (fact.kind === 'tool_settled') closed.add(fact.operationId);
    if (fact.kind === 'tool_reconciled' && fact.decision.kind !== 'unknown') closed.add(fact.operationId);
    if (fact.kind === 'tool_dispatched' && !closed.has(fact.operationId)) {
      open.set(event.invocation.invocationId, event.invocation);
    }
  }
  for (const { sequence, event } of events) {
    if (sequence > since) open.set(event.invocation.invocationId, event.invocation);
  }
  const recoveries = new Map<string, InvocationRecovery>();
  for (const [id, invocation] of open)
    recoveries.set(id, await log.invocationRecovery(invocation, wideBounds));
  return { chain, events, unfinished, recoveries };
}
