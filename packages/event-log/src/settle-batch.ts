import { CommitError, type CommitReceipt } from '@factum/agent-facts';
import { AppendRefusedError } from './append-refused-error.js';
import type { BatchResult, CommitHooks, StagedWrite } from './staged-write.js';

/** A write in the group-commit queue and the caller waiting for it. */
export type PendingWrite = {
  readonly staged: StagedWrite;
  readonly resolve: (receipt: CommitReceipt) => void;
  readonly reject: (error: unknown) => void;
};

/**
 * Tells each caller of a batch what became of its write: its receipt, the rule that
 * refused it, or the batch's failure (`rejected`, or `outcome_unknown` when `COMMIT`
 * failed and the store may have kept it). `afterCommit` runs first, as crash tests
 * expect: the batch is durable and nobody has been told.
 */
export function settleBatch(batch: readonly PendingWrite[], result: BatchResult, hooks: CommitHooks): void {
  if (result.kind === 'committed' && hooks.afterCommit !== undefined) {
    const eventIds = result.outcomes.flatMap((outcome) =>
      'stored' in outcome ? [outcome.stored.eventId] : [],
    );
    const timing = { waitedMs: result.waitedMs, heldMs: result.elapsedMs - result.waitedMs };
    hooks.afterCommit({ size: eventIds.length, eventIds, committer: result.committer, timing });
  }
  const failure =
    result.kind === 'committed'
      ? undefined
      : result.committing
        ? CommitError.outcomeUnknown('the log could not confirm the commit; the write may be durable', {
            cause: result.cause,
          })
        : CommitError.rejected('the log transaction failed; nothing of this write was stored', {
            cause: result.cause,
          });
  batch.forEach((pending, index) => {
    const outcome = result.outcomes[index];
    if (outcome !== undefined && 'refused' in outcome) {
      pending.reject(new AppendRefusedError(outcome.refused.code, outcome.refused.message));
    } else if (failure !== undefined || outcome === undefined) {
      pending.reject(failure ?? CommitError.outcomeUnknown('the log returned no outcome for this write'));
    } else {
      pending.resolve(outcome.stored);
    }
  });
}
