import {
  type EventOrigin,
  EventWrite,
  type Fact,
  type Invocation,
  type JsonValue,
  RuntimeEvent,
} from '@factum/agent-facts';
import { AppendRefusedError, type EventLog } from '@factum/event-log';
import { findOperation } from './operation-lookup.js';
import { RunError, type RunErrorCode } from './run-error.js';
import type { SessionAccess } from './session-access.js';

/** A person's decision on a call that waits for approval. */
export type DecideOptions = {
  readonly decision: 'approve' | 'deny';
  /** Who decided (1 to 256 characters): an OS user, a token's label. */
  readonly by: string;
  /** Why (at most 2048 characters); a denial's note is read by the model. */
  readonly note?: string;
  /** The digest of the input the person saw; refused when it is not the requested one. */
  readonly inputDigest?: string;
  /** The operation's session: needed only when another session uses the same operation id. */
  readonly sessionId?: string;
};

/** The recorded decision, and what it was about. */
export type ApprovalDecision = {
  readonly operationId: string;
  readonly sessionId: string;
  /** The parked invocation the decision was written into. */
  readonly invocation: Invocation;
  readonly decision: 'approved' | 'denied';
  readonly by: string;
  readonly note?: string;
  readonly inputDigest: string;
  readonly toolName: string;
  readonly input: JsonValue;
};

const REFUSALS: ReadonlySet<RunErrorCode> = new Set([
  'approval_unknown',
  'approval_decided_twice',
  'already_executed',
  'approval_input_mismatch',
  'approval_pending',
]);

/**
 * Records `approval_decided` for an operation that waits for a person, in the invocation
 * that asked. Writes nothing else and runs nothing: a continuation carries the decision
 * out. Refusals are typed and write nothing; the log checks them again inside its write
 * transaction, so of two processes deciding at once exactly one wins.
 */
export async function decideApproval(
  log: EventLog,
  operationId: string,
  options: DecideOptions,
  context: { readonly access: SessionAccess; readonly origin?: EventOrigin },
): Promise<ApprovalDecision> {
  checkOptions(options);
  // A waiting call is in the log's list of pending approvals: no need to page the log.
  const listed = options.sessionId ?? (await pendingSession(log, operationId));
  const found = await findOperation(log, context.access, operationId, listed);
  if (found === undefined) {
    throw new RunError('approval_unknown', `no operation ${operationId} is in the log`);
  }
  const facts = found.facts.map(({ fact }) => fact);
  const request = facts.find((fact) => fact.kind === 'approval_requested');
  const carriedOut = facts.some(
    (fact) =>
      fact.kind === 'tool_dispatched' || fact.kind === 'tool_settled' || fact.kind === 'tool_rejected',
  );
  if (request?.kind !== 'approval_requested') {
    if (carriedOut)
      throw new RunError('already_executed', `operation ${operationId} ran without an approval`);
    throw new RunError('approval_unknown', `no approval was requested for operation ${operationId}`);
  }
  if (facts.some((fact) => fact.kind === 'approval_decided')) {
    throw new RunError('approval_decided_twice', `operation ${operationId} was already decided`);
  }
  if (carriedOut) throw new RunError('already_executed', `operation ${operationId} was already carried out`);
  if (options.inputDigest !== undefined && options.inputDigest !== request.inputDigest) {
    throw new RunError(
      'approval_input_mismatch',
      `the input decided on (${options.inputDigest}) is not the one requested (${request.inputDigest})`,
    );
  }
  const decision = options.decision === 'approve' ? 'approved' : 'denied';
  const fact: Fact = {
    kind: 'approval_decided',
    operationId,
    decision,
    inputDigest: request.inputDigest,
    by: options.by,
    ...(options.note === undefined ? {} : { note: options.note }),
  };
  const invocation = found.facts.find(({ fact }) => fact.kind === 'approval_requested')!.invocation;
  try {
    await context.access.commit(EventWrite.plain(RuntimeEvent.create(invocation, fact, context.origin)));
  } catch (error) {
    throw refusalOf(error, operationId);
  }
  return {
    operationId,
    sessionId: found.sessionId,
    invocation,
    decision,
    by: options.by,
    ...(options.note === undefined ? {} : { note: options.note }),
    inputDigest: request.inputDigest,
    toolName: request.call.name,
    input: request.call.input,
  };
}

async function pendingSession(log: EventLog, operationId: string): Promise<string | undefined> {
  const sessions = new Set(
    (await log.pendingApprovals())
      .filter((pending) => pending.operationId === operationId)
      .map((pending) => pending.sessionId),
  );
  return sessions.size === 1 ? [...sessions][0] : undefined;
}

function checkOptions(options: DecideOptions): void {
  if (options.decision !== 'approve' && options.decision !== 'deny') {
    throw new RunError('invalid_input', "a decision is 'approve' or 'deny'");
  }
  if (typeof options.by !== 'string' || options.by.length < 1 || options.by.length > 256) {
    throw new RunError('invalid_input', '`by` names who decided, in 1 to 256 characters');
  }
  if (options.note !== undefined && (typeof options.note !== 'string' || options.note.length > 2048)) {
    throw new RunError('invalid_input', 'a note has at most 2048 characters');
  }
}

/** A log refusal as the engine's typed error; anything else is a persistence failure. */
export function refusalOf(error: unknown, operationId: string): RunError {
  if (AppendRefusedError.isInstance(error)) {
    const code = error.code as string;
    if (REFUSALS.has(code as RunErrorCode)) {
      return new RunError(code as RunErrorCode, error.message, { cause: error });
    }
    if (code === 'lease_expired') return new RunError('lease_lost', error.message, { cause: error });
  }
  return new RunError('persistence', `the decision on ${operationId} could not be recorded`, {
    cause: error,
  });
}
