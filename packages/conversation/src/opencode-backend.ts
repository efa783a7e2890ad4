import { AbortFlight, raceSignal } from './abort-flight.js';
import { AbortReconciliation } from './abort-reconciliation.js';
import { ascendingIds } from './ascending-id.js';
import type { BackendContext, ConversationTimeouts } from './backend-context.js';
import { type Clock, systemClock } from './clock.js';
import type {
  AbortResult,
  ConversationBackend,
  PromptRequest,
  PromptStream,
} from './conversation-backend.js';
import { ConversationError } from './conversation-error.js';
import { Deadline } from './deadline.js';
import { OpenCodeClient } from './opencode-client.js';
import { PromptChannel } from './prompt-channel.js';
import { PromptDriver } from './prompt-driver.js';
import type { PromptOutcome } from './prompt-outcome.js';
import { promptKey } from './prompt-record.js';
import type { PromptStore } from './prompt-store.js';
import { runTransaction } from './run-transaction.js';
import { TaskSet } from './task-set.js';

/** Options of `OpenCodeBackend.open`. */
export type OpenCodeBackendOptions = {
  /** Base URL of the server, e.g. `http://127.0.0.1:4096`. */
  readonly baseUrl: string;
  /** Where prompt records live; the backend does not close it. */
  readonly store: PromptStore;
  /** Attach to an existing session (e.g. after a restart) instead of creating one. */
  readonly sessionId?: string;
  readonly timeouts?: Partial<ConversationTimeouts>;
  /** Pause between retries of a conflicting transaction or a status poll (default 25 ms). */
  readonly retryDelayMs?: number;
  readonly clock?: Clock;
  /**
   * Id generator for messages (`msg`) and parts (`prt`); ids must sort by creation among
   * the server's own (default: the server's scheme, see `ascendingIds`).
   */
  readonly newId?: (prefix: 'msg' | 'prt') => string;
  readonly signal?: AbortSignal;
};

const defaultTimeouts: ConversationTimeouts = {
  promptMs: 600_000,
  abortMs: 30_000,
  requestMs: 30_000,
  settleMs: 1_000,
  cleanupMs: 5_000,
};

/**
 * A `ConversationBackend` over an OpenCode-style server (HTTP + SSE). One prompt is in
 * flight at a time; its durable record lets `abort()` reconcile it after its observer,
 * or the process that sent it, went away.
 *
 * @example
 * ```ts
 * const store = await openSqlitePromptStore('prompts.sqlite');
 * await using backend = await OpenCodeBackend.open({ baseUrl: 'http://127.0.0.1:4096', store });
 * for await (const event of backend.prompt({ text: 'Summarise README.md' })) {
 *   if (event.kind === 'delta') process.stdout.write(event.delta);
 * }
 * ```
 */
export class OpenCodeBackend implements ConversationBackend, AsyncDisposable {
  readonly #context: BackendContext;
  readonly #closing: AbortController;
  readonly #newId: (prefix: 'msg' | 'prt') => string;
  #live: PromptDriver | undefined;
  #flight: AbortFlight | undefined;
  #generation = 0;
  #closed: Promise<void> | undefined;

  private constructor(
    context: BackendContext,
    closing: AbortController,
    newId: (prefix: 'msg' | 'prt') => string,
  ) {
    this.#context = context;
    this.#closing = closing;
    this.#newId = newId;
  }

  /** Connects to the server and creates (or attaches to) a session. */
  static async open(options: OpenCodeBackendOptions): Promise<OpenCodeBackend> {
    const timeouts = { ...defaultTimeouts, ...options.timeouts };
    const clock = options.clock ?? systemClock;
    const client = new OpenCodeClient(options.baseUrl, { requestTimeoutMs: timeouts.requestMs });
    const closing = new AbortController();
    try {
      let sessionId = options.sessionId;
      if (sessionId === undefined) {
        if (options.signal?.aborted) throw cancelledBefore(options.signal, 'open');
        using deadline = Deadline.after(clock, timeouts.requestMs, options.signal);
        sessionId = await client
          .createSession({ signal: deadline.signal, operation: 'open' })
          .catch((error) => {
            if (ConversationError.isInstance(error)) throw error;
            throw new ConversationError('the session could not be created in time', {
              kind: deadline.cancelledByParent() ? 'cancelled' : 'timeout',
              context: { operation: 'open', phase: 'session' },
              detail: { kind: 'deadline_elapsed', deadline: 'request', timeoutMs: timeouts.requestMs },
              cause: error,
            });
          });
      }
      const context: BackendContext = {
        sessionId,
        key: promptKey(sessionId),
        store: options.store,
        client,
        clock,
        tasks: new TaskSet(),
        timeouts,
        retryDelayMs: options.retryDelayMs ?? 25,
        closing: closing.signal,
      };
      return new OpenCodeBackend(context, closing, options.newId ?? ascendingIds());
    } catch (error) {
      await client.close();
      throw error;
    }
  }

  /** The server's session id of this conversation. */
  id(): string {
    return this.#context.sessionId;
  }

  /**
   * Sends a prompt and streams its events. A refusal (another prompt in flight, a
   * record left to reconcile, a closed backend) is the stream's terminal error.
   */
  prompt(request: PromptRequest, options: { readonly signal?: AbortSignal } = {}): PromptStream {
    const messageId = this.#newId('msg');
    const refusal = this.#admissionRefusal(options.signal);
    if (refusal) {
      const channel = new PromptChannel(messageId, { onDrop: () => undefined });
      channel.finish({ ok: false, error: refusal });
      return channel;
    }
    this.#generation += 1;
    this.#flight = undefined;
    const driver = new PromptDriver(this.#context, request, {
      messageId,
      partId: this.#newId('prt'),
      signal: options.signal,
    }).start();
    this.#live = driver;
    const forget = () => {
      if (this.#live === driver) this.#live = undefined;
    };
    void driver.settled.then(forget, forget);
    return driver.channel;
  }

  /** The unary form of `prompt`: resolves to the terminal outcome. */
  send(request: PromptRequest, options: { readonly signal?: AbortSignal } = {}): Promise<PromptOutcome> {
    return this.prompt(request, options).result();
  }

  /**
   * Aborts the in-flight prompt and reconciles its record, within one deadline that
   * starts now. Observers of the same prompt generation share one reconciliation;
   * `signal` ends only this caller's wait, never the reconciliation.
   */
  async abort(options: { readonly signal?: AbortSignal } = {}): Promise<AbortResult> {
    const { signal } = options;
    if (signal?.aborted) throw cancelledBefore(signal, 'abort');
    if (this.#closed) throw closedError('abort');
    const generation = this.#generation;
    // The original deadline: it starts now and bounds the shared reconciliation too.
    const deadline = Deadline.after(
      this.#context.clock,
      this.#context.timeouts.abortMs,
      this.#context.closing,
    );
    let handedOver = false;
    try {
      const activation = this.#context.tasks.run(() =>
        runTransaction(
          {
            store: this.#context.store,
            clock: this.#context.clock,
            purpose: 'abort_activation',
            operation: 'abort',
            deadline,
            deadlinePhase: 'reconciliation',
            retryConflicts: true,
            retryDelayMs: this.#context.retryDelayMs,
          },
          async (tx) => ({ commit: false, value: await tx.read(this.#context.key) }),
        ),
      );
      const snapshot = await raceSignal(activation, signal);
      const current = this.#flight;
      if (current && current.generation === generation && !(current.settled && current.published)) {
        return await current.observe(signal);
      }
      const live = this.#live;
      if (!snapshot && !live) return { kind: 'idle' };
      const reconciliation = new AbortReconciliation(this.#context, deadline, live);
      handedOver = true;
      const work = this.#context.tasks.run(async () => {
        try {
          return await reconciliation.run(snapshot);
        } finally {
          deadline[Symbol.dispose]();
        }
      });
      const flight = new AbortFlight(generation, work);
      this.#flight = flight;
      return await flight.observe(signal);
    } finally {
      if (!handedOver) deadline[Symbol.dispose]();
    }
  }

  /**
   * Stops every prompt observation and reconciliation of this backend, waits for them
   * to finish, and closes its connections. The store stays open (it is the caller's).
   */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      // A plain reason: each layer reports its own `cancelled` error with its own phase.
      this.#closing.abort(new Error('the conversation backend was closed'));
      await this.#context.tasks.drain();
      await this.#context.client.close();
    })();
    return this.#closed;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #admissionRefusal(signal: AbortSignal | undefined): ConversationError | undefined {
    const refuse = (message: string) =>
      new ConversationError(message, {
        kind: 'invalid_state',
        context: { operation: 'prompt', phase: 'admission' },
      });
    if (this.#closed) return closedError('prompt');
    if (signal?.aborted) return cancelledBefore(signal, 'prompt');
    if (this.#live) return refuse(`prompt ${this.#live.messageId} is still in flight on this conversation`);
    if (this.#flight && !this.#flight.settled)
      return refuse('an abort of this conversation is still reconciling');
    return undefined;
  }
}

function cancelledBefore(signal: AbortSignal, operation: 'open' | 'prompt' | 'abort'): ConversationError {
  return new ConversationError('the signal was aborted before the operation started', {
    kind: 'cancelled',
    context: { operation, phase: 'admission' },
    cause: signal.reason,
  });
}

function closedError(operation: 'prompt' | 'abort'): ConversationError {
  return new ConversationError('the conversation backend is closed', {
    kind: 'invalid_state',
    context: { operation, phase: 'admission' },
  });
}
