import type { Fact, FactOf, Invocation } from '@factum/agent-facts';
import { callInputDigest } from '@factum/agent-facts/digest';
import type { OperationState, RuleEffects, RuleState } from './append-rules.js';
import { RuleRefusal } from './rule-refusal.js';

/**
 * What the log keeps of an operation's approval: the invocation that requested it, the
 * call it names (tool and input digest), its deadline and its decision.
 */
export type ApprovalState = {
  readonly invocationId: string;
  readonly toolName: string;
  readonly inputDigest: string;
  /** Milliseconds of the database's clock; null when it never expires. */
  readonly expiresAt: number | null;
  decision: 'approved' | 'denied' | 'expired' | null;
};

/**
 * `approval_requested`: only for an operation id never dispatched, rejected or
 * requested in the session. The operation then waits (`requested`) for a decision.
 */
export function checkRequest(
  fact: FactOf<'approval_requested'>,
  invocation: Invocation,
  state: RuleState,
): RuleEffects {
  if (state.operation(invocation.sessionId, fact.operationId) !== undefined) {
    throw new RuleRefusal(
      'duplicate_dispatch',
      `operation ${fact.operationId} was already dispatched, rejected or requested in session ${invocation.sessionId}`,
    );
  }
  const expiresAt = fact.expiresAt === undefined ? null : Date.parse(fact.expiresAt);
  return {
    request: {
      operationId: fact.operationId,
      approval: {
        invocationId: invocation.invocationId,
        toolName: fact.call.name,
        inputDigest: fact.inputDigest,
        expiresAt,
        decision: null,
      },
    },
  };
}

/**
 * `approval_decided`: once, in the invocation that requested it, for the input it
 * requested, while the operation has been neither dispatched nor rejected. `expired`
 * only once the deadline has passed by the database's clock (`now`, read in the write
 * transaction).
 */
export function checkDecision(
  fact: FactOf<'approval_decided'>,
  invocation: Invocation,
  state: RuleState,
  now: number | undefined,
): RuleEffects {
  const operation = state.operation(invocation.sessionId, fact.operationId);
  const approval = operation?.approval;
  if (operation === undefined || approval === undefined) {
    throw new RuleRefusal(
      'approval_unknown',
      `operation ${fact.operationId} of session ${invocation.sessionId} has no approval_requested to decide`,
    );
  }
  if (approval.invocationId !== invocation.invocationId) {
    throw new RuleRefusal(
      'invalid_write',
      `the approval of operation ${fact.operationId} was requested in invocation ${approval.invocationId}: its decision is written there, not in ${invocation.invocationId}`,
    );
  }
  if (approval.decision !== null) {
    throw new RuleRefusal(
      'approval_decided_twice',
      `operation ${fact.operationId} was already decided (${approval.decision}); a decision is final`,
    );
  }
  if (operation.state !== 'requested') {
    throw new RuleRefusal(
      'operation_closed',
      `operation ${fact.operationId} was already ${operation.state === 'rejected' ? 'rejected' : 'executed'}; there is nothing left to decide`,
    );
  }
  if (fact.inputDigest !== approval.inputDigest) {
    throw new RuleRefusal(
      'approval_input_mismatch',
      `the decision names input ${fact.inputDigest}, but operation ${fact.operationId} asked for ${approval.inputDigest}`,
    );
  }
  if (fact.decision === 'expired') {
    if (approval.expiresAt === null) {
      throw new RuleRefusal(
        'approval_not_expired',
        `the approval of operation ${fact.operationId} has no deadline: it never expires`,
      );
    }
    if (now === undefined) throw new Error('unreachable: a batch with an expiry reads the clock');
    if (approval.expiresAt > now) {
      throw new RuleRefusal(
        'approval_not_expired',
        `the approval of operation ${fact.operationId} runs until ${new Date(approval.expiresAt).toISOString()}, later than the database's clock`,
      );
    }
  }
  return { decide: { operationId: fact.operationId, decision: fact.decision } };
}

/**
 * `tool_dispatched` of an operation that asked for approval: only once approved, and
 * only with the call approved. The input's digest is computed here, from the call this
 * very write dispatches, so no caller can name one digest and run another input.
 */
export function checkApprovedDispatch(
  fact: FactOf<'tool_dispatched'>,
  operation: OperationState & { approval: ApprovalState },
): { readonly operationId: string; readonly state: 'dispatched' } {
  const { approval } = operation;
  if (approval.decision !== 'approved') {
    throw new RuleRefusal(
      'approval_missing',
      approval.decision === null
        ? `operation ${fact.operationId} waits for a person's approval: it is not dispatched before one is recorded`
        : `operation ${fact.operationId} was ${approval.decision}: it never runs`,
    );
  }
  if (fact.call.name !== approval.toolName) {
    throw new RuleRefusal(
      'approval_input_mismatch',
      `operation ${fact.operationId} was approved for tool ${approval.toolName}, not ${fact.call.name}`,
    );
  }
  const digest = callInputDigest(fact.call.input);
  if (digest !== approval.inputDigest) {
    throw new RuleRefusal(
      'approval_input_mismatch',
      `operation ${fact.operationId} was approved with input ${approval.inputDigest}; this call's input is ${digest}: only the approved input runs`,
    );
  }
  return { operationId: fact.operationId, state: 'dispatched' };
}

/**
 * `invocation_ended {approval_pending}`: every operation it names asked for approval in
 * this invocation and has not run, so a continuation knows exactly what it waits for.
 */
export function checkPendingEnd(
  operations: readonly string[],
  invocation: Invocation,
  state: RuleState,
): void {
  for (const operationId of operations) {
    const operation = state.operation(invocation.sessionId, operationId);
    if (
      operation?.approval === undefined ||
      operation.approval.invocationId !== invocation.invocationId ||
      operation.state !== 'requested'
    ) {
      throw new RuleRefusal(
        'approval_unknown',
        `invocation ${invocation.invocationId} cannot wait for operation ${operationId}: it requested no approval for it there, or it already ran or was rejected`,
      );
    }
  }
}

/** Whether a write to an ended invocation is a decision it parked for. */
export function decidingParked(fact: Fact, terminal: string | null): boolean {
  return fact.kind === 'approval_decided' && terminal === 'awaiting_approval';
}

/** Whether a fact needs the database's clock in its transaction (an expiry). */
export function needsClock(fact: Fact): boolean {
  return fact.kind === 'approval_decided' && fact.decision === 'expired';
}
