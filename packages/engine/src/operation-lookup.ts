import type { Fact, Invocation } from '@factum/agent-facts';
import type { EventLog } from '@factum/event-log';
import type { SessionEvent } from './context-projection.js';
import { RunError } from './run-error.js';
import type { SessionAccess } from './session-access.js';

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

/**
 * Finds an operation by id. A person's decision or resolution names the operation (and
 * at times its session): without a session, the log's operations table says which
 * session holds it (`operationSessions`), and an id that more than one session uses is
 * refused `invalid_input` — name the session then. Reads that session after.
 */
export async function findOperation(
  log: EventLog,
  access: SessionAccess,
  operationId: string,
  sessionId?: string,
): Promise<OperationRecord | undefined> {
  const session = sessionId ?? (await sessionOf(log, operationId));
  if (session === undefined) return undefined;
  const events = await access.events(session);
  const facts = events
    .filter(({ event }) => concerns(event.fact, operationId))
    .map(({ event }) => ({ fact: event.fact, invocation: event.invocation }));
  const first = facts[0];
  if (first === undefined) return undefined;
  return { sessionId: session, invocation: first.invocation, facts, events };
}

async function sessionOf(log: EventLog, operationId: string): Promise<string | undefined> {
  const sessions = await log.operationSessions(operationId);
  if (sessions.length > 1) {
    throw new RunError(
      'invalid_input',
      `operation ${operationId} exists in sessions ${sessions.join(', ')}: name the session`,
    );
  }
  return sessions[0];
}

function concerns(fact: Fact, operationId: string): boolean {
  return 'operationId' in fact && fact.operationId === operationId;
}
