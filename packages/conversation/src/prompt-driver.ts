import type { BackendContext } from './backend-context.js';
import type { PromptRequest } from './conversation-backend.js';
import { ConversationError } from './conversation-error.js';
import { Deadline } from './deadline.js';
import { observePrompt } from './observe-prompt.js';
import { PromptChannel } from './prompt-channel.js';
import type { PromptOutcome } from './prompt-outcome.js';
import { admittedRecord, type PromptRecord } from './prompt-record.js';
import { type RunTransactionOptions, runTransaction } from './run-transaction.js';

/**
 * Runs one prompt to its end: durable admission (the record with the client-chosen
 * message id is committed before anything is sent), the request and its event stream,
 * then the durable terminal and its hand-over to the observer. The driver keeps going
 * when its observer goes away; it never outlives its deadline.
 */
export class PromptDriver {
  readonly channel: PromptChannel;
  readonly #context: BackendContext;
  readonly #request: PromptRequest;
  readonly #partId: string;
  readonly #admitted: Promise<boolean>;
  readonly #resolveAdmitted: (admitted: boolean) => void;
  #cancelRequested = false;
  #outcome: PromptOutcome | undefined;
  #settled: Promise<void> = Promise.resolve();

  constructor(
    context: BackendContext,
    request: PromptRequest,
    ids: { readonly messageId: string; readonly partId: string; readonly signal?: AbortSignal },
  ) {
    this.#context = context;
    this.#request = request;
    this.#partId = ids.partId;
    let resolve: (admitted: boolean) => void = () => undefined;
    this.#admitted = new Promise<boolean>((done) => {
      resolve = done;
    });
    this.#resolveAdmitted = resolve;
    this.channel = new PromptChannel(ids.messageId, {
      onDrop: () => this.#observerLost(),
      signal: ids.signal,
    });
  }

  get messageId(): string {
    return this.channel.messageId;
  }

  /** Resolves when the driver has finished with the server and the store. */
  get settled(): Promise<void> {
    return this.#settled;
  }

  /** The outcome the server reported, once known. */
  get outcome(): PromptOutcome | undefined {
    return this.#outcome;
  }

  /** Starts the driver as a task of the backend. */
  start(): this {
    this.#settled = this.#context.tasks.run(() => this.#run());
    return this;
  }

  /** An abort wants this prompt stopped: if it was not sent yet, it never will be. */
  requestCancel(): void {
    this.#cancelRequested = true;
  }

  async #run(): Promise<void> {
    using deadline = Deadline.after(
      this.#context.clock,
      this.#context.timeouts.promptMs,
      this.#context.closing,
    );
    let admitted = false;
    try {
      admitted = await this.#admit(deadline);
    } catch (error) {
      this.channel.finish({ ok: false, error: error as ConversationError });
      return;
    } finally {
      this.#resolveAdmitted(admitted);
    }
    if (this.#cancelRequested) {
      await this.#settleOutcome({ outcome: 'cancelled', assistantMessageId: null }, deadline);
      return;
    }
    const observed = await observePrompt(this.#context, {
      channel: this.channel,
      deadline,
      message: {
        messageId: this.messageId,
        partId: this.#partId,
        text: this.#request.text,
        agent: this.#request.agent,
        model: this.#request.model,
      },
    });
    if (observed.ok) {
      this.#outcome = observed.outcome;
      await this.#settleOutcome(observed.outcome, deadline);
    } else {
      await this.#settleLoss(observed.error);
    }
  }

  #transaction(deadline: Deadline, purpose: RunTransactionOptions['purpose']): RunTransactionOptions {
    const phase = purpose === 'delivery' ? 'delivery' : purpose === 'admission' ? 'admission' : 'response';
    return {
      store: this.#context.store,
      clock: this.#context.clock,
      purpose,
      operation: 'prompt',
      deadline,
      deadlinePhase: phase,
      retryConflicts: purpose !== 'response_loss',
      retryDelayMs: this.#context.retryDelayMs,
    };
  }

  #admit(deadline: Deadline): Promise<boolean> {
    const { key } = this.#context;
    return runTransaction(this.#transaction(deadline, 'admission'), async (tx) => {
      const existing = await tx.read(key);
      if (existing) {
        throw new ConversationError(
          `prompt ${existing.message_id} is still recorded for this conversation: call abort() to reconcile it first`,
          { kind: 'invalid_state', context: { operation: 'prompt', phase: 'admission' } },
        );
      }
      await tx.put(key, admittedRecord(this.messageId, this.#partId));
      return { commit: true, value: true };
    });
  }

  /** Records the terminal, clears the record, and only then hands the outcome over. */
  async #settleOutcome(outcome: PromptOutcome, deadline: Deadline): Promise<void> {
    const { key } = this.#context;
    const ours = (record: PromptRecord | undefined): record is PromptRecord =>
      record?.message_id === this.messageId;
    try {
      const recorded = await runTransaction(this.#transaction(deadline, 'response'), async (tx) => {
        const record = await tx.read(key);
        // Gone: an abort already reconciled this prompt; the outcome is still the server's.
        if (!ours(record)) return { commit: false, value: false };
        const waiter = record.waiter === 'waiting' ? 'delivering' : record.waiter;
        await tx.put(key, { ...record, phase: { phase: 'terminal', outcome }, waiter });
        return { commit: true, value: true };
      });
      if (recorded) {
        await runTransaction(this.#transaction(deadline, 'delivery'), async (tx) => {
          const record = await tx.read(key);
          if (!ours(record)) return { commit: false, value: undefined };
          await tx.delete(key);
          return { commit: true, value: undefined };
        });
      }
    } catch (error) {
      this.channel.finish({ ok: false, error: error as ConversationError });
      return;
    }
    this.channel.finish({ ok: true, outcome });
  }

  /**
   * The observation ended without an outcome (bad answer, broken stream, deadline):
   * nobody waits any more, but the native prompt may still run, so the record stays
   * for `abort()` to reconcile. One attempt only: a failure here is reported with the
   * primary error and changes nothing durable.
   */
  async #settleLoss(primary: ConversationError): Promise<void> {
    const extra: ConversationError[] = [];
    using cleanup = Deadline.after(
      this.#context.clock,
      this.#context.timeouts.cleanupMs,
      this.#context.closing,
    );
    try {
      await this.#releaseWaiter(cleanup, 'response_loss');
    } catch (error) {
      extra.push(error as ConversationError);
    }
    this.channel.finish({ ok: false, error: primary.withSupplementary(extra) });
  }

  #releaseWaiter(deadline: Deadline, purpose: 'response_loss' | 'observer_release'): Promise<void> {
    const { key } = this.#context;
    return runTransaction(this.#transaction(deadline, purpose), async (tx) => {
      const record = await tx.read(key);
      if (
        record?.message_id !== this.messageId ||
        record.phase.phase !== 'admitted' ||
        record.waiter !== 'waiting'
      ) {
        return { commit: false, value: undefined };
      }
      await tx.put(key, { ...record, waiter: 'lost' });
      return { commit: true, value: undefined };
    });
  }

  /** The observer went away: durably say nobody waits, once admission is known. */
  #observerLost(): void {
    void this.#context.tasks.run(async () => {
      if (!(await this.#admitted)) return;
      using deadline = Deadline.after(
        this.#context.clock,
        this.#context.timeouts.cleanupMs,
        this.#context.closing,
      );
      // A failure leaves the waiter `waiting`; abort reconciliation never relies on it.
      await this.#releaseWaiter(deadline, 'observer_release').catch(() => undefined);
    });
  }
}
