import type { BackendContext } from './backend-context.js';
import { sleep } from './clock.js';
import type { AbortResult } from './conversation-backend.js';
import { ConversationError } from './conversation-error.js';
import type { Deadline } from './deadline.js';
import { findAnswer } from './map-prompt-response.js';
import type { PromptDriver } from './prompt-driver.js';
import type { PromptOutcome } from './prompt-outcome.js';
import type { PromptRecord } from './prompt-record.js';
import type { TransactionPurpose } from './prompt-store.js';
import { runTransaction, type TransactionPlan } from './run-transaction.js';
import type { TrackedTransaction } from './tracked-transaction.js';

type Decision =
  | { readonly kind: 'gone' }
  | { readonly kind: 'settled'; readonly messageId: string; readonly outcome: PromptOutcome }
  | { readonly kind: 'lost'; readonly messageId: string }
  | { readonly kind: 'native'; readonly messageId: string }
  | { readonly kind: 'terminal' };

/**
 * The durable part of an abort, for one recorded prompt:
 * 1. intent — commit `cancellation: requested` (skipped for a recorded terminal);
 * 2. reconciliation — read the record again and decide against the server's status:
 *    a terminal is cleared (`settled`); a quiescent prompt without outcome is cleared
 *    with the answer the server still holds for it (`settled`), or reported as lost
 *    (`invalid_state`) when it holds none; a running one is left unchanged (a
 *    confirmed rollback) and aborted natively, then cleared (`aborted`).
 * Every step runs under the abort's original deadline.
 */
export class AbortReconciliation {
  readonly #context: BackendContext;
  readonly #deadline: Deadline;
  readonly #live: PromptDriver | undefined;

  constructor(context: BackendContext, deadline: Deadline, live: PromptDriver | undefined) {
    this.#context = context;
    this.#deadline = deadline;
    this.#live = live;
  }

  /** Reconciles from the record the abort's activation read. */
  async run(snapshot: PromptRecord | undefined): Promise<AbortResult> {
    const live = this.#live;
    live?.requestCancel();
    if (!snapshot) {
      if (live) return this.#stopNative(live.messageId, 'busy');
      return { kind: 'idle' };
    }
    if (snapshot.phase.phase === 'terminal' && !live) {
      const cleared = await this.#transaction('abort_reconciliation', (tx) => this.#clearTerminal(tx));
      if (cleared.kind !== 'terminal') return this.#publish(cleared);
    }
    if (snapshot.cancellation.state !== 'requested') {
      const intent = await this.#transaction('abort_intent', async (tx) => {
        const record = await tx.read(this.#context.key);
        if (!record) return { commit: false, value: 'gone' as const };
        if (record.phase.phase === 'terminal') return { commit: false, value: 'terminal' as const };
        await tx.put(this.#context.key, { ...record, cancellation: { state: 'requested' } });
        return { commit: true, value: 'requested' as const };
      });
      if (intent === 'gone') return live ? this.#stopNative(live.messageId, 'busy') : { kind: 'idle' };
    }
    const status = await this.#within(this.#context.client.status(this.#context.sessionId, this.#call()));
    // Quiescent without a recorded outcome: the answer may still be on the server, found
    // by the message it answers. Looked up before the transaction (no HTTP inside it).
    const recovered =
      status === 'idle' && !live && snapshot.phase.phase === 'admitted'
        ? await this.#recover(snapshot.message_id)
        : undefined;
    const decision = await this.#transaction<Decision>('abort_reconciliation', async (tx) => {
      const record = await tx.read(this.#context.key);
      if (!record) return unchanged<Decision>({ kind: 'gone' });
      if (live) return unchanged<Decision>({ kind: 'native', messageId: record.message_id });
      if (record.phase.phase === 'terminal') return this.#clearTerminal(tx, record);
      if (status === 'idle') {
        await tx.delete(this.#context.key);
        if (recovered && recovered.messageId === record.message_id) {
          const { messageId, outcome } = recovered;
          return { commit: true, value: { kind: 'settled' as const, messageId, outcome } };
        }
        // Nothing runs natively, no outcome was recorded and the server has no answer.
        return { commit: true, value: { kind: 'lost' as const, messageId: record.message_id } };
      }
      return unchanged<Decision>({ kind: 'native', messageId: record.message_id });
    });
    if (decision.kind === 'native') return this.#stopNative(decision.messageId, status);
    if (decision.kind === 'gone' && live) return this.#stopNative(live.messageId, status);
    return this.#publish(decision);
  }

  #publish(decision: Decision): AbortResult {
    switch (decision.kind) {
      case 'gone':
      case 'terminal':
        return { kind: 'idle' };
      case 'settled':
        return { kind: 'settled', messageId: decision.messageId, outcome: decision.outcome };
      case 'lost':
        throw new ConversationError(
          `prompt ${decision.messageId} ended on the server without a recorded outcome; its state was cleared and its answer is lost`,
          { kind: 'invalid_state', context: { operation: 'abort', phase: 'cancellation' } },
        );
      case 'native':
        return { kind: 'aborted', messageId: decision.messageId };
      default:
        return decision satisfies never;
    }
  }

  async #clearTerminal(tx: TrackedTransaction, read?: PromptRecord): Promise<TransactionPlan<Decision>> {
    const record = read ?? (await tx.read(this.#context.key));
    if (!record) return unchanged<Decision>({ kind: 'gone' });
    if (record.phase.phase !== 'terminal') return unchanged<Decision>({ kind: 'terminal' });
    await tx.delete(this.#context.key);
    return {
      commit: true,
      value: { kind: 'settled', messageId: record.message_id, outcome: record.phase.outcome },
    };
  }

  /** The server's finished answer to `messageId`, if it has one. */
  async #recover(messageId: string): Promise<{ messageId: string; outcome: PromptOutcome } | undefined> {
    const messages = await this.#within(
      this.#context.client.messages(this.#context.sessionId, { ...this.#call(), phase: 'reconciliation' }),
    );
    const outcome = findAnswer(messages, messageId, 'abort');
    return outcome && { messageId, outcome };
  }

  /** Aborts natively (only after the unchanged reconciliation rolled back), then clears the record. */
  async #stopNative(messageId: string, status: string): Promise<AbortResult> {
    const live = this.#live;
    if (status !== 'idle')
      await this.#within(this.#context.client.abort(this.#context.sessionId, this.#call()));
    if (live) await this.#within(live.settled);
    await this.#waitIdle();
    await this.#transaction('abort_reconciliation', async (tx) => {
      const record = await tx.read(this.#context.key);
      if (record?.message_id !== messageId) return unchanged(undefined);
      await tx.delete(this.#context.key);
      return { commit: true, value: undefined };
    });
    const outcome = live?.outcome;
    if (outcome && outcome.outcome !== 'cancelled') return { kind: 'settled', messageId, outcome };
    return { kind: 'aborted', messageId };
  }

  async #waitIdle(): Promise<void> {
    for (;;) {
      const status = await this.#within(this.#context.client.status(this.#context.sessionId, this.#call()));
      if (status === 'idle') return;
      await this.#within(
        sleep(this.#context.clock, this.#context.retryDelayMs, { signal: this.#deadline.signal }),
      );
    }
  }

  /** `work`, unless the deadline elapses first (then a `timeout` in phase cancellation). */
  async #within<T>(work: Promise<T>): Promise<T> {
    const signal = this.#deadline.signal;
    let onAbort: () => void = () => undefined;
    try {
      return await Promise.race([
        work,
        new Promise<never>((_, reject) => {
          onAbort = () => reject(signal.reason);
          if (signal.aborted) onAbort();
          else signal.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
    } catch (error) {
      if (ConversationError.isInstance(error)) throw error;
      throw new ConversationError('the abort deadline elapsed before the server confirmed the cancellation', {
        kind: this.#deadline.cancelledByParent() ? 'cancelled' : 'timeout',
        context: { operation: 'abort', phase: 'cancellation' },
        detail: { kind: 'deadline_elapsed', deadline: 'operation', timeoutMs: null },
        cause: error,
      });
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  #call() {
    return { signal: this.#deadline.signal, operation: 'abort' as const };
  }

  #transaction<T>(
    purpose: TransactionPurpose,
    body: (tx: TrackedTransaction) => Promise<TransactionPlan<T>>,
  ) {
    return runTransaction(
      {
        store: this.#context.store,
        clock: this.#context.clock,
        purpose,
        operation: 'abort',
        deadline: this.#deadline,
        deadlinePhase: 'reconciliation',
        retryConflicts: true,
        retryDelayMs: this.#context.retryDelayMs,
      },
      body,
    );
  }
}

function unchanged<T>(value: T): TransactionPlan<T> {
  return { commit: false, value };
}
