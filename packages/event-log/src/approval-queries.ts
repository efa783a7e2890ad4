import type { ApprovalDecisionKind, Invocation, JsonValue, ToolCall } from '@factum/agent-facts';
import type { Kysely } from 'kysely';
import { EventLogError } from './event-log-error.js';
import { postgresDialect, sqliteDialect } from './log-dialect.js';
import type { LogDatabase, OperationsTable } from './log-schema.js';
import { decodeRow } from './stored-event.js';

/** A person's decision on an approval, as recorded. */
export type RecordedDecision = {
  readonly decision: ApprovalDecisionKind;
  readonly by: string;
  readonly note?: string;
  /** When it was recorded (the event's time). */
  readonly at: string;
};

/**
 * An approval a parked run waits for: the call exactly as requested (`call`, and its
 * `toolName` and `input` for display), why, and until when. `decision` is present once
 * decided and until a continuation dispatches or rejects the operation.
 */
export type PendingApproval = {
  readonly sessionId: string;
  /** The invocation that requested it and parked: decisions are written into it. */
  readonly invocation: Invocation;
  readonly operationId: string;
  readonly toolName: string;
  readonly input: JsonValue;
  readonly call: ToolCall;
  readonly inputDigest: string;
  readonly reason: string;
  /** When it was requested (the event's time). */
  readonly requestedAt: string;
  readonly expiresAt?: string;
  readonly decision?: RecordedDecision;
};

/**
 * An approval of one invocation, with where its operation stands: `requested` (not yet
 * continued, decided or not), `dispatched` (its approved call ran or may have: T1 was
 * written), `closed` (settled or reconciled) or `rejected` (denied, expired, cancelled).
 */
export type InvocationApproval = PendingApproval & {
  readonly status: OperationsTable['state'];
};

type ApprovalRow = {
  session_id: string;
  operation_id: string;
  state: OperationsTable['state'];
  requested_sequence: number | string | bigint | null;
  decided_sequence: number | string | bigint | null;
};

const columns = [
  'o.session_id',
  'o.operation_id',
  'o.state',
  'o.requested_sequence',
  'o.decided_sequence',
] as const;

/**
 * Approvals waiting across sessions (or one), oldest first: requested by an invocation
 * that parked for them (`awaiting_approval`) and neither dispatched nor rejected since.
 */
export async function pendingApprovals(
  db: Kysely<LogDatabase>,
  options: {
    readonly sessionId?: string;
    readonly limit: number;
    readonly expiredBy?: 'sqlite' | 'postgres';
  },
): Promise<PendingApproval[]> {
  let query = db
    .selectFrom('operations as o')
    .innerJoin('invocations as i', (join) =>
      join
        .onRef('i.session_id', '=', 'o.session_id')
        .onRef('i.invocation_id', '=', 'o.approval_invocation_id'),
    )
    .select(columns)
    .where('o.state', '=', 'requested')
    .where('i.terminal', '=', 'awaiting_approval')
    .orderBy('o.requested_sequence', 'asc')
    .limit(options.limit);
  if (options.sessionId !== undefined) query = query.where('o.session_id', '=', options.sessionId);
  if (options.expiredBy !== undefined) {
    const clock = options.expiredBy === 'sqlite' ? sqliteDialect.clock : postgresDialect.clock;
    const now = Number((await db.executeQuery(clock)).rows[0]?.now);
    query = query.where('o.decision', 'is', null).where('o.expires_at', '<=', now);
  }
  return withFacts(db, await query.execute());
}

/** Every approval `invocation` requested, in request order, with where each stands. */
export async function invocationApprovals(
  db: Kysely<LogDatabase>,
  invocation: { readonly sessionId: string; readonly invocationId: string },
): Promise<InvocationApproval[]> {
  const rows = await db
    .selectFrom('operations as o')
    .select(columns)
    .where('o.session_id', '=', invocation.sessionId)
    .where('o.approval_invocation_id', '=', invocation.invocationId)
    .orderBy('o.requested_sequence', 'asc')
    .execute();
  const approvals = await withFacts(db, rows);
  return approvals.map((approval, index) => ({ ...approval, status: rows[index]!.state }));
}

/** Reads the request and decision facts of each row (by sequence, the events' key). */
async function withFacts(db: Kysely<LogDatabase>, rows: readonly ApprovalRow[]): Promise<PendingApproval[]> {
  const sequences = rows.flatMap((row) =>
    [row.requested_sequence, row.decided_sequence].filter((s) => s !== null).map(Number),
  );
  if (sequences.length === 0) return [];
  const events = new Map<number, ReturnType<typeof decodeRow>>();
  for (let start = 0; start < sequences.length; start += 500) {
    const found = await db
      .selectFrom('events')
      .select(['sequence', 'body'])
      .where('sequence', 'in', sequences.slice(start, start + 500))
      .execute();
    for (const row of found) events.set(Number(row.sequence), decodeRow(row));
  }
  return rows.map((row) => approvalOf(row, events));
}

function approvalOf(row: ApprovalRow, events: Map<number, ReturnType<typeof decodeRow>>): PendingApproval {
  const requested = events.get(Number(row.requested_sequence))?.event;
  if (requested?.fact.kind !== 'approval_requested') {
    throw new EventLogError(
      'corrupt_row',
      `operation ${row.operation_id} of session ${row.session_id} names no approval_requested event`,
    );
  }
  const fact = requested.fact;
  const decided = row.decided_sequence === null ? undefined : events.get(Number(row.decided_sequence))?.event;
  const decision =
    decided?.fact.kind === 'approval_decided'
      ? {
          decision: decided.fact.decision,
          by: decided.fact.by,
          ...(decided.fact.note === undefined ? {} : { note: decided.fact.note }),
          at: decided.timestamp,
        }
      : undefined;
  return {
    sessionId: row.session_id,
    invocation: requested.invocation,
    operationId: fact.operationId,
    toolName: fact.call.name,
    input: fact.call.input,
    call: fact.call,
    inputDigest: fact.inputDigest,
    reason: fact.reason,
    requestedAt: requested.timestamp,
    ...(fact.expiresAt === undefined ? {} : { expiresAt: fact.expiresAt }),
    ...(decision === undefined ? {} : { decision }),
  };
}
