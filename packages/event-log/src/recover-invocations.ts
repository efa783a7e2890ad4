import { EventWrite, type Invocation, RuntimeEvent } from '@factum/agent-facts';
import { AppendRefusedError } from './append-refused-error.js';
import type { PendingApproval } from './approval-queries.js';
import type { EventLog } from './event-log.js';
import { expireApprovals } from './expire-approvals.js';
import type { UnfinishedInvocation } from './invocation-ownership.js';

const bounds = { maxEvents: 100_000, maxBytes: 256 * 1024 * 1024 };

/** What one recovery pass did, and what it left alone and why. */
export type RecoveryReport = {
  /** Invocations it ended as `failed {interrupted}`. */
  readonly ended: readonly Invocation[];
  /** Unfinished invocations whose owner's lease is live: running elsewhere, untouched. */
  readonly live: readonly UnfinishedInvocation[];
  /** Unfinished invocations whose owner's host row cannot be trusted: untouched. */
  readonly invalid: readonly UnfinishedInvocation[];
  /** Parked approvals it denied as `expired` (their deadline passed by the database's clock). */
  readonly expiredApprovals: readonly PendingApproval[];
};

/**
 * Ends the unfinished invocations whose owner's lease has expired by the database's
 * clock (or that were opened without a lease) as `failed {interrupted}`; a live
 * owner's invocations are never touched, whoever calls it and whenever, and neither are
 * the calling log's own (same host and epoch: they are running in this process). Calls the
 * model asked for that never reached dispatch are first recorded as rejected
 * (`interrupted`): they did not run and now never will. Dispatched operations stay
 * uncertain; recovery never runs an effect. Every write is a takeover (`takeOver`):
 * the first one fences the old owner off in the same transaction. Another process
 * recovering the same invocation at once is not an error: the loser skips it. Then
 * denies as `expired` the parked approvals past their deadline (`expireApprovals`).
 */
export async function recoverExpired(log: EventLog, limit = 10_000): Promise<RecoveryReport> {
  const ended: Invocation[] = [];
  const live: UnfinishedInvocation[] = [];
  const invalid: UnfinishedInvocation[] = [];
  // This process's own runs are running here, whatever the database's clock says of its
  // lease (a stalled event loop can let it lapse between renewals): it never ends them.
  const mine = log.lease?.stamp;
  for (const unfinished of await log.unfinishedOwnership(limit)) {
    const { lease, owner } = unfinished.ownership;
    const ours = mine !== undefined && owner?.hostId === mine.hostId && owner.epoch === mine.epoch;
    if (lease === 'live' || ours) live.push(unfinished);
    else if (lease === 'invalid') invalid.push(unfinished);
    else if (await endInterrupted(log, unfinished.invocation)) ended.push(unfinished.invocation);
  }
  // The same sweep expires parked approvals: any host may, as deadlines are the database's.
  const expiredApprovals = await expireApprovals(log, limit);
  return { ended, live, invalid, expiredApprovals };
}

/** Same as `recoverExpired`, and says how many invocations it ended. */
export async function recoverInvocations(log: EventLog): Promise<number> {
  return (await recoverExpired(log)).ended.length;
}

/** Ends one invocation; false when another writer got there first or its owner is back. */
async function endInterrupted(log: EventLog, invocation: Invocation): Promise<boolean> {
  const recovery = await log.invocationRecovery(invocation, bounds);
  if (recovery.ended) return false;
  const rejected = new Set<string>();
  try {
    for (const { operationId, stepId, call, repeated } of recovery.undispatchedCalls) {
      if (rejected.has(operationId)) continue;
      rejected.add(operationId);
      const fact = {
        kind: 'tool_rejected' as const,
        operationId,
        call: { kind: 'provider' as const, stepId, callId: call.id },
        name: call.name,
        input: call.input,
        reason: repeated ? { kind: 'repeated_call_id' as const } : { kind: 'interrupted' as const },
      };
      await skipping(['duplicate_dispatch'], () =>
        log.takeOver(EventWrite.plain(RuntimeEvent.create(invocation, fact))),
      );
    }
    const uncertain = recovery.uncertainOperations;
    const message =
      uncertain.length === 0
        ? 'the process running this invocation stopped before it ended'
        : `the process running this invocation stopped before it ended; ${uncertain.length} operation(s) have an unknown outcome: ${uncertain.join(', ')}`;
    const outcome = { kind: 'failed' as const, error: { code: 'interrupted', message } };
    await log.takeOver(
      EventWrite.plain(RuntimeEvent.create(invocation, { kind: 'invocation_ended', outcome })),
    );
    return true;
  } catch (error) {
    // Lost a race: another recovery ended it, or its owner renewed before the takeover.
    if (
      AppendRefusedError.isInstance(error) &&
      ['sealed_invocation', 'owner_live', 'fenced', 'host_row_invalid'].includes(error.code)
    ) {
      return false;
    }
    throw error;
  }
}

async function skipping(codes: readonly string[], write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (error) {
    if (!(AppendRefusedError.isInstance(error) && codes.includes(error.code))) throw error;
  }
}
