import { type Clock, sleep } from './clock.js';
import { ConversationError, type ErrorOperation, type ErrorPhase } from './conversation-error.js';
import type { Deadline } from './deadline.js';
import { mapStoreError } from './map-store-error.js';
import type { CommitReceipt, PromptStore, TransactionPurpose } from './prompt-store.js';
import { storeFailureOf } from './prompt-store-error.js';
import { TrackedTransaction } from './tracked-transaction.js';

/** What a transaction body decided: commit its writes, or leave the store unchanged. */
export type TransactionPlan<T> = { readonly commit: boolean; readonly value: T };

/** Options of `runTransaction`. */
export type RunTransactionOptions = {
  readonly store: PromptStore;
  readonly clock: Clock;
  readonly purpose: TransactionPurpose;
  readonly operation: ErrorOperation;
  /** The operation's own deadline; retries never outlive it. */
  readonly deadline: Deadline;
  /** Phase reported when the deadline ends the retries. */
  readonly deadlinePhase: ErrorPhase;
  /** Retry definite conflicts (after a confirmed rollback) until the deadline. */
  readonly retryConflicts: boolean;
  readonly retryDelayMs: number;
};

/**
 * Runs one durable transition: begin, let `body` read and write, then commit or roll
 * back. The rules, each one a seed case:
 * - a definite conflict (begin, read, write or commit) is retried from scratch only
 *   after its rollback is confirmed, and never past the original deadline;
 * - a failed rollback is surfaced (as a supplementary error) and authorises no
 *   further attempt;
 * - "unchanged" still needs a confirmed rollback;
 * - a commit with unknown outcome is never repeated: its receipt is read back, and
 *   only a receipt with this transaction's id and write digest confirms it.
 */
export async function runTransaction<T>(
  options: RunTransactionOptions,
  body: (tx: TrackedTransaction) => Promise<TransactionPlan<T>>,
): Promise<T> {
  const { operation } = options;
  let lastConflict: ConversationError | undefined;
  for (;;) {
    checkDeadline(options, lastConflict);
    let tx: TrackedTransaction;
    try {
      tx = await TrackedTransaction.begin(options.store, { purpose: options.purpose, operation });
    } catch (error) {
      // A begin that failed opened nothing, so there is nothing to roll back.
      lastConflict = retryable(options, error);
      await pause(options, lastConflict);
      continue;
    }
    let plan: TransactionPlan<T>;
    try {
      plan = await body(tx);
    } catch (error) {
      const primary = mapStoreError(error, { operation, phase: 'state_read' });
      await rollbackOrSurface(tx, primary);
      lastConflict = retryable(options, primary);
      await pause(options, lastConflict);
      continue;
    }
    if (!plan.commit) {
      await tx.rollback();
      return plan.value;
    }
    let receipt: CommitReceipt;
    try {
      receipt = await tx.commit();
    } catch (error) {
      const primary = mapStoreError(error, { operation, phase: 'state_commit' });
      if (storeFailureOf(error) === 'conflict') {
        await rollbackOrSurface(tx, primary);
        lastConflict = retryable(options, primary);
        await pause(options, lastConflict);
        continue;
      }
      await confirmUnknownCommit(options, tx, primary);
      return plan.value;
    }
    if (receipt.transactionId !== tx.id || receipt.digest !== tx.expectedDigest()) {
      const primary = new ConversationError('commit returned a receipt of another transaction', {
        kind: 'integration',
        context: { operation, phase: 'state_commit' },
        detail: { kind: 'service_unavailable' },
      });
      await confirmUnknownCommit(options, tx, primary);
    }
    return plan.value;
  }
}

function checkDeadline(options: RunTransactionOptions, last: ConversationError | undefined): void {
  const { deadline, operation, deadlinePhase } = options;
  if (deadline.cancelledByParent()) {
    throw new ConversationError('the conversation was closed before the transition was confirmed', {
      kind: 'cancelled',
      context: { operation, phase: deadlinePhase },
      supplementary: last ? [last] : [],
      cause: deadline.signal.reason,
    });
  }
  if (deadline.expired()) {
    throw new ConversationError(`the ${operation} deadline elapsed before the prompt state was reconciled`, {
      kind: 'timeout',
      context: { operation, phase: deadlinePhase },
      detail: { kind: 'deadline_elapsed', deadline: 'operation', timeoutMs: null },
      supplementary: last ? [last] : [],
    });
  }
}

/** Returns `error` if it may be retried, or throws it. */
function retryable(options: RunTransactionOptions, error: unknown): ConversationError {
  const mapped = mapStoreError(error, { operation: options.operation, phase: 'state_begin' });
  if (mapped.kind === 'conflict' && options.retryConflicts) return mapped;
  throw mapped;
}

async function pause(options: RunTransactionOptions, last: ConversationError): Promise<void> {
  checkDeadline(options, last);
  const wait = Math.min(options.retryDelayMs, options.deadline.remaining());
  await sleep(options.clock, wait, { signal: options.deadline.signal }).catch(() => undefined);
}

/** Rolls back after `primary`; if the rollback fails, `primary` is thrown with it attached. */
async function rollbackOrSurface(tx: TrackedTransaction, primary: ConversationError): Promise<void> {
  try {
    await tx.rollback();
  } catch (cleanup) {
    throw primary.withSupplementary([cleanup as ConversationError]);
  }
}

/**
 * After a commit whose outcome is unknown: settle the transaction handle, then read
 * the receipt back. Returns only if the receipt proves this very transaction
 * committed; otherwise throws the commit error (with any read or rollback failures
 * attached), and the caller must never write again in this transition.
 */
async function confirmUnknownCommit(
  options: RunTransactionOptions,
  tx: TrackedTransaction,
  primary: ConversationError,
): Promise<void> {
  const extra: ConversationError[] = [];
  try {
    await tx.rollback();
  } catch (cleanup) {
    extra.push(cleanup as ConversationError);
  }
  for (;;) {
    try {
      const receipt = await options.store.readReceipt(tx.id);
      if (receipt?.transactionId === tx.id && receipt.digest === tx.expectedDigest()) return;
      break;
    } catch (error) {
      extra.push(mapStoreError(error, { operation: options.operation, phase: 'receipt_read' }));
      if (options.deadline.signal.aborted || options.deadline.expired()) break;
      const wait = Math.min(options.retryDelayMs, options.deadline.remaining());
      await sleep(options.clock, wait, { signal: options.deadline.signal }).catch(() => undefined);
      if (options.deadline.signal.aborted) break;
    }
  }
  throw primary.withSupplementary(extra);
}
