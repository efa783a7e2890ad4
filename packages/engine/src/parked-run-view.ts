import type { Invocation, JsonValue, RunBoundary } from '@factum/agent-facts';
import type { EventLog } from '@factum/event-log';
import { waitingParkedRun } from './parked-run.js';
import type { SessionAccess } from './session-access.js';

/** A run parked on approvals, as a caller needs it to decide and continue. */
export type ParkedRunView = {
  readonly invocation: Invocation;
  /** Where a continuation starts: `work: { kind: 'continuation', source, tools }`. */
  readonly source: RunBoundary;
  /** Every waiting call is decided: a continuation will be admitted. */
  readonly ready: boolean;
  readonly operations: readonly {
    readonly operationId: string;
    readonly toolName: string;
    readonly input: JsonValue;
    readonly inputDigest: string;
    readonly reason: string;
    readonly expiresAt?: string;
    readonly decision?: 'approved' | 'denied' | 'expired';
  }[];
};

/** The session's parked run that still has a waiting call, if any. */
export async function parkedRunView(
  log: EventLog,
  access: SessionAccess,
  sessionId: string,
): Promise<ParkedRunView | undefined> {
  const events = await access.events(sessionId);
  const parked = waitingParkedRun(events);
  if (parked === undefined) return undefined;
  const found = await log.runSource(sessionId, parked.invocation.runId, parked.lastSequence);
  if (found === undefined) return undefined;
  const waiting = parked.operations.filter((operation) => operation.state === 'waiting');
  return {
    invocation: parked.invocation,
    source: found.boundary,
    ready: waiting.every((operation) => operation.decision !== undefined),
    operations: waiting.map((operation) => ({
      operationId: operation.operationId,
      toolName: operation.call.name,
      input: operation.call.input,
      inputDigest: operation.inputDigest,
      reason: operation.reason,
      ...(operation.expiresAt === undefined ? {} : { expiresAt: operation.expiresAt }),
      ...(operation.decision === undefined ? {} : { decision: operation.decision.decision }),
    })),
  };
}
