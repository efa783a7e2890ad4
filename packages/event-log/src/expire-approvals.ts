import { EventWrite, RuntimeEvent } from '@factum/agent-facts';
import { AppendRefusedError } from './append-refused-error.js';
import type { PendingApproval } from './approval-queries.js';
import type { EventLog } from './event-log.js';

/** Who records an expiry: the runtime, not a person. */
export const EXPIRY_DECIDER = 'factum';

/**
 * Denies as `expired` every parked approval still undecided past its `expiresAt` by the
 * database's clock: writes `approval_decided {expired, by: 'factum'}` into the invocation
 * that requested it (a continuation then rejects the call as expired). The rule checks
 * the deadline again in the write's transaction, so a clock read here that is already
 * stale cannot expire an approval early. A person deciding at the same moment is not an
 * error: whoever commits first wins and the other is skipped. Returns what it expired.
 */
export async function expireApprovals(log: EventLog, limit = 1000): Promise<PendingApproval[]> {
  const expired: PendingApproval[] = [];
  for (const approval of await log.expiredApprovals(limit)) {
    const fact = {
      kind: 'approval_decided' as const,
      operationId: approval.operationId,
      decision: 'expired' as const,
      inputDigest: approval.inputDigest,
      by: EXPIRY_DECIDER,
    };
    try {
      await log.commit(EventWrite.plain(RuntimeEvent.create(approval.invocation, fact)));
      expired.push(approval);
    } catch (error) {
      const lost =
        AppendRefusedError.isInstance(error) &&
        ['approval_decided_twice', 'operation_closed', 'sealed_invocation'].includes(error.code);
      if (!lost) throw error;
    }
  }
  return expired;
}
