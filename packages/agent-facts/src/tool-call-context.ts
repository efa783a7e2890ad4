import { hash } from 'node:crypto';

/**
 * What every effect is told about the call it runs for. The same context reaches a
 * tool's `invoke` at dispatch, at a recorded re-run, and its `reconcile(fn)`, so a tool
 * can carry at-most-once past Factum's edge: send `idempotencyKey` to the API it calls,
 * and look the effect up by the same key when it reconciles.
 */
export type ToolCallContext = {
  /** The operation the effect belongs to (`${stepId}:${callId}` for a model's call). */
  readonly operationId: string;
  /**
   * A key derived from the session and the operation: the same in every process, after
   * every restart, at every attempt and in reconciliation. Safe to send to a service
   * (it says nothing but itself).
   */
  readonly idempotencyKey: string;
  /** Aborts when the run is cancelled. An effect that has started may finish anyway. */
  readonly signal: AbortSignal;
  /** 1 for the dispatch; n for the nth recorded re-run during reconciliation. */
  readonly attempt: number;
  readonly sessionId: string;
  readonly invocationId: string;
  /**
   * Records progress as a `tool_notified` fact, durable when it resolves. A failed
   * commit rejects with `ToolError('persistence')`: the call then ends uncertain.
   */
  notify(message: string): Promise<void>;
};

/**
 * The idempotency key of an operation: `factum-` and 32 hex digits of the SHA-256 of
 * its session and operation id. Operation ids are unique within a session, so the key
 * is unique across the log, and it is a pure function: nothing needs to store it.
 */
export function idempotencyKeyOf(sessionId: string, operationId: string): string {
  return `factum-${hash('sha256', `${sessionId}\n${operationId}`, 'hex').slice(0, 32)}`;
}
