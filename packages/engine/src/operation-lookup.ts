import type { Fact, Invocation } from '@factum/agent-facts';
import type { EventLog } from '@factum/event-log';
import type { SessionEvent } from './context-projection.js';
import type { ContextBounds } from './model-turn.js';
import { RunError } from './run-error.js';

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
 * Finds an operation by id. A person's decision or resolution names the operation (and
 * at times its session): without a session this pages through the whole log (an
 * operator action is rare; runs never call this), and an id that more than one session
 * uses is refused `invalid_input` — name the session then. Reads that session after.
 */
export async function findOperation(
  log: EventLog,
  operationId: string,
  bounds: ContextBounds,
  sessionId?: string,
): Promise<OperationRecord | undefined> {
  const session = sessionId ?? (await sessionOf(log, operationId));
  if (session === undefined) return undefined;
  const events = (await log.scopedPrefix({ session }, bounds)).events;
  const facts = events
    .filter(({ event }) => concerns(event.fact, operationId))
    .map(({ event }) => ({ fact: event.fact, invocation: event.invocation }));
  const first = facts[0];
  if (first === undefined) return undefined;
  return { sessionId: session, invocation: first.invocation, facts, events };
}

async function sessionOf(log: EventLog, operationId: string): Promise<string | undefined> {
  const sessions = new Set<string>();
  for (let after = 0; ; ) {
    const page = await log.read({ afterSequence: after, limit: PAGE });
    if (page.length === 0) break;
    for (const { event } of page) {
      if (concerns(event.fact, operationId)) sessions.add(event.invocation.sessionId);
    }
    after = page[page.length - 1]!.sequence;
  }
  if (sessions.size > 1) {
    throw new RunError(
      'invalid_input',
      `operation ${operationId} exists in sessions ${[...sessions].join(', ')}: name the session`,
    );
  }
  return [...sessions][0];
}

function concerns(fact: Fact, operationId: string): boolean {
  return 'operationId' in fact && fact.operationId === operationId;
}
