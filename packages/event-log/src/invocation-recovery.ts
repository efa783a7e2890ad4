import { type ModelToolCall, stepToolCalls } from '@factum/agent-facts';
import type { InvocationOwnership } from './invocation-ownership.js';
import type { StoredEvent } from './stored-event.js';

/** A call the model asked for that was neither dispatched nor rejected. */
export type UndispatchedCall = {
  readonly operationId: string;
  readonly stepId: string;
  readonly call: ModelToolCall;
  /** An earlier call of the step has the same call id: it gets its own operation. */
  readonly repeated: boolean;
};

/**
 * What recovery knows about one invocation: operations dispatched and never settled
 * (their effect may or may not have happened — parents and cells included), and calls
 * accepted from the model that never reached dispatch (their effect did not happen).
 */
export type InvocationRecovery = {
  readonly uncertainOperations: string[];
  readonly undispatchedCalls: UndispatchedCall[];
  readonly ended: boolean;
  /**
   * The last recorded attempt of each uncertain operation that reconciliation re-ran
   * (`tool_redispatched`): a crash during a re-run leaves it uncertain at that attempt.
   */
  readonly attempts: Readonly<Record<string, number>>;
  /** Who owns the invocation and whether its lease is live (from `EventLog.invocationRecovery`). */
  readonly ownership?: InvocationOwnership;
};

/** Computes recovery from one invocation's events, in order. Pure: runs no effect. */
export function recoveryOf(events: readonly StoredEvent[]): InvocationRecovery {
  const dispatched = new Map<string, true>();
  const handled = new Set<string>();
  const accepted: UndispatchedCall[] = [];
  const attempts = new Map<string, number>();
  let ended = false;
  for (const { event } of events) {
    const fact = event.fact;
    switch (fact.kind) {
      case 'tool_dispatched':
        dispatched.set(fact.operationId, true);
        handled.add(fact.operationId);
        break;
      case 'tool_rejected':
        handled.add(fact.operationId);
        break;
      case 'tool_settled':
        dispatched.delete(fact.operationId);
        break;
      case 'tool_redispatched':
        attempts.set(fact.operationId, fact.attempt);
        break;
      case 'tool_reconciled':
        if (fact.decision.kind !== 'unknown') dispatched.delete(fact.operationId);
        break;
      case 'model_completed':
        // Each call once, under the operation the live loop gave it (a repeated call
        // id included), so recovery never names one operation twice.
        for (const { operationId, call, repeated } of stepToolCalls(fact.stepId, fact.output.parts)) {
          accepted.push({ operationId, stepId: fact.stepId, call, repeated });
        }
        break;
      case 'invocation_ended':
        ended = true;
        break;
      default:
        break;
    }
  }
  return {
    uncertainOperations: [...dispatched.keys()],
    undispatchedCalls: accepted.filter((call) => !handled.has(call.operationId)),
    ended,
    attempts: Object.fromEntries([...attempts].filter(([operationId]) => dispatched.has(operationId))),
  };
}
