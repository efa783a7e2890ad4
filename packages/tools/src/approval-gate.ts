import { callInputDigest, FactumError, type JsonValue } from '@factum/agent-facts';
import type { PreparedCall, RunContext } from './tool-call-runner.js';
import type { CatalogEntry } from './tool-catalog.js';

/** What a run adds to its tools' own approval rules. */
export type ApprovalPolicy = {
  /** Every call of these tools needs a person's approval in this run. */
  readonly requireApproval?: readonly string[];
  /** Deadline of an approval in this run, unless the tool sets its own. */
  readonly approvalTtlMs?: number;
};

const REASON_LIMIT = 1024;
const marker = Symbol.for('@factum/approval-requested');

/**
 * Thrown by a step's `invoke` for a call that now waits for a person: its
 * `approval_requested` is recorded (durable at the latest with the run's parking end,
 * whose transaction carries it when the sink defers) and nothing ran. It is not a failure of the run; the
 * step's other calls go on and the invocation parks at the end of the step.
 */
export class ApprovalRequested extends FactumError {
  readonly operationId: string;
  readonly [marker] = true;

  constructor(operationId: string, toolName: string) {
    super('approval_pending', `${toolName} waits for a person's approval (operation ${operationId})`);
    this.operationId = operationId;
  }

  static override isInstance(value: unknown): value is ApprovalRequested {
    return FactumError.isInstance(value) && (value as unknown as Record<symbol, unknown>)[marker] === true;
  }
}

/** The digest an approval is bound to: of the canonical JSON of the call's input. */
export function approvalInputDigest(input: unknown): string {
  return callInputDigest(input as JsonValue);
}

/**
 * Why a call of `entry` with `input` needs approval, or `undefined` when it needs none.
 * A rule that throws needs approval: a broken check must not let an effect through.
 */
export function approvalReason(
  entry: CatalogEntry,
  input: unknown,
  policy: ApprovalPolicy,
): string | undefined {
  const name = entry.registration.definition.name;
  const rule = entry.registration.approval;
  let reason: string | undefined;
  if (rule === 'always') reason = `${name} always needs a person's approval`;
  else if (typeof rule === 'function') {
    try {
      const verdict = rule(input);
      if (typeof verdict === 'string') reason = verdict.trim() === '' ? `${name} needs approval` : verdict;
      else if (verdict === true) reason = `${name} needs a person's approval for this input`;
    } catch {
      reason = `${name}'s approval rule failed, so this call needs a person's approval`;
    }
  }
  if (reason === undefined && policy.requireApproval?.includes(name)) {
    reason = `this run needs a person's approval for every call of ${name}`;
  }
  return reason === undefined ? undefined : reason.slice(0, REASON_LIMIT);
}

/**
 * Records `approval_requested` for a call instead of dispatching it: the exact input,
 * its digest and the reason. Nothing runs. Nobody outside can act on the request before
 * the run parks, so it rides with the run's next waited-for commit (the step's next
 * call or the parking end) when the sink allows it. Its deadline is counted from the
 * log's clock, by which the log expires it.
 */
export async function requestApproval(
  context: RunContext,
  prepared: PreparedCall,
  reason: string,
  policy: ApprovalPolicy,
): Promise<void> {
  const ttl = prepared.entry?.registration.approvalTtlMs ?? policy.approvalTtlMs;
  // The log expires approvals by its own clock: the deadline is counted from it.
  const now = ttl === undefined ? 0 : await context.ledger.databaseNow();
  await context.ledger.defer({
    kind: 'approval_requested',
    operationId: prepared.operationId,
    call: prepared.call,
    inputDigest: approvalInputDigest(prepared.call.input),
    reason,
    ...(ttl === undefined ? {} : { expiresAt: new Date(now + ttl).toISOString() }),
  });
}
