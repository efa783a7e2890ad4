/** Every event, in commit order; `body` is the canonical JSON of the RuntimeEvent. */
export interface EventsTable {
  sequence: number;
  event_id: string;
  session_id: string;
  invocation_id: string;
  run_id: string;
  kind: string;
  operation_id: string | null;
  body: string;
  bytes: number;
  digest: string;
  session_digest: string;
}

/** One row per invocation: when it opened and, once sealed, how it ended. */
export interface InvocationsTable {
  session_id: string;
  invocation_id: string;
  turn_id: string;
  run_id: string;
  opened_sequence: number;
  ended_sequence: number | null;
  terminal: string | null;
  live: number | null;
  /** The host that owns the invocation and its epoch; null when opened without a lease. */
  owner_host_id: string | null;
  owner_epoch: number | null;
  /** How many takeovers moved this invocation to another owner. */
  fence: number;
  /** The submitter's key of its opening, unique in the session (null: none given). */
  idempotency_key: string | null;
}

/**
 * One row per operation id that was dispatched, rejected or requested for approval in a
 * session. `invocation_id` and `sequence` name its dispatch or rejection (its request
 * until then); the `approval_*` columns and their neighbours are set only for an
 * operation that asked for approval, and keep the request and its decision.
 */
export interface OperationsTable {
  session_id: string;
  operation_id: string;
  invocation_id: string;
  parent_operation_id: string | null;
  state: 'requested' | 'dispatched' | 'closed' | 'rejected';
  sequence: number;
  /** The invocation that requested the approval (and where its decision is written). */
  approval_invocation_id: string | null;
  tool_name: string | null;
  input_digest: string | null;
  /** The deadline in milliseconds (compared with the database's clock). */
  expires_at: number | null;
  decision: 'approved' | 'denied' | 'expired' | null;
  requested_sequence: number | null;
  decided_sequence: number | null;
}

/** Who may open a session's next invocation (the session's chain head lives in `events`). */
export interface SessionsTable {
  session_id: string;
  live_invocation_id: string | null;
  held_for_invocation_id: string | null;
}

/** Tool results stored out of line, by the id of the event that settled them. */
export interface ToolResultsTable {
  event_id: string;
  session_id: string;
  digest: string;
  body: string;
}

/**
 * One row per host id: the epoch of its current registration and its lease. Times are
 * milliseconds of the database's clock, never of the host's.
 */
export interface HostsTable {
  host_id: string;
  epoch: number;
  pid: number;
  hostname: string;
  started_at: string;
  ttl_ms: number;
  renewed_at: number;
  expires_at: number;
}

export interface LogDatabase {
  hosts: HostsTable;
  events: EventsTable;
  invocations: InvocationsTable;
  operations: OperationsTable;
  sessions: SessionsTable;
  tool_results: ToolResultsTable;
}
