import type { Fact, Invocation } from '@factum/agent-facts';
import type { EventLog } from '@factum/event-log';
import type { SessionEvent } from './context-projection.js';
import type { ContextBounds } from './model-turn.js';

/** One operation as the log holds it: its session, the invocation that named it, its facts. */
export type OperationRecord = {
  readonly sessionId: string;
  /** The invocation whose step made the call (where its approval or dispatch is). */
  readonly invocation: Invocation;
  /** Every fact about the operation, in log order, with the invocation that wrote it. */
  readonly facts: readonly { readonly fact: Fact; readonly invocation: Invocation }[];
  /** The whole session, for checks that need more than the operation. */
  readonly events: readonly SessionEvent[];
};

const PAGE = 2000;

/**
 * Finds an operation by id anywhere in the log. A person's decision or resolution names
 * only the operation, so this pages through the log until the first fact about it (an
 * operator action is rare; runs never call this), then reads that session.
 */
export async function findOperation(
  log: EventLog,
  operationId: string,
  bounds: ContextBounds,
): Promise<OperationRecord | undefined> {
  let after = 0;
  let sessionId: string | undefined;
  while (sessionId === undefined) {
    const page = await log.read({ afterSequence: after, limit: PAGE });
    if (page.length === 0) return undefined;
    sessionId = page.find(({ event }) => concerns(event.fact, operationId))?.event.invocation.sessionId;
    after = page[page.length - 1]!.sequence;
  }
  const events = (await log.scopedPrefix({ session: sessionId }, bounds)).events;
  const facts = events
    .filter(({ event }) => concerns(event.fact, operationId))
    .map(({ event }) => ({ fact: event.fact, invocation: event.invocation }));
  const first = facts[0];
  if (first === undefined) return undefined;
  return { sessionId, invocation: first.invocation, facts, events };
}

function concerns(fact: Fact, operationId: string): boolean {
  return 'operationId' in fact && fact.operationId === operationId;
}
