import type { ConversationEvent, PromptStream } from './conversation-backend.js';
import { ConversationError } from './conversation-error.js';
import type { PromptOutcome } from './prompt-outcome.js';

/** How a prompt ended for its observer. */
export type PromptTerminal =
  | { readonly ok: true; readonly outcome: PromptOutcome }
  | { readonly ok: false; readonly error: ConversationError };

/**
 * The single-consumer queue between a prompt's driver and its observer. The driver
 * pushes events and finishes once; the observer sees the events and exactly one
 * terminal. When the observer goes away first, `onDrop` tells the driver.
 */
export class PromptChannel implements PromptStream {
  readonly messageId: string;
  readonly #events: ConversationEvent[] = [];
  readonly #onDrop: () => void;
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort = () => this.#cancel();
  #terminal: PromptTerminal | undefined;
  #cancelled: ConversationError | undefined;
  #dropped = false;
  #iterated = false;
  #wake: (() => void) | undefined;

  constructor(messageId: string, options: { readonly onDrop: () => void; readonly signal?: AbortSignal }) {
    this.messageId = messageId;
    this.#onDrop = options.onDrop;
    this.#signal = options.signal;
    this.#signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** True once the observer has gone away before its terminal. */
  get dropped(): boolean {
    return this.#dropped;
  }

  /** Queues an event for the observer (ignored once it is gone or the terminal is set). */
  push(event: ConversationEvent): void {
    if (this.#dropped || this.#terminal) return;
    this.#events.push(event);
    this.#notify();
  }

  /** Sets the terminal; only the first call counts. */
  finish(terminal: PromptTerminal): void {
    if (this.#terminal) return;
    this.#terminal = terminal;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    this.#notify();
  }

  [Symbol.asyncIterator](): AsyncIterator<ConversationEvent> {
    if (this.#iterated) throw new TypeError('a prompt stream can be iterated only once');
    this.#iterated = true;
    if (this.#signal?.aborted && !this.#terminal) this.#cancel();
    return this.#iterate();
  }

  async result(): Promise<PromptOutcome> {
    for await (const event of this) {
      if (event.kind === 'terminal') return event.outcome;
    }
    // Unreachable: the iterator either yields a terminal or throws.
    throw new ConversationError('the prompt stream ended without a terminal', {
      kind: 'invalid_state',
      context: { operation: 'prompt', phase: 'delivery' },
    });
  }

  async *#iterate(): AsyncGenerator<ConversationEvent> {
    let ended = false;
    try {
      for (;;) {
        if (this.#cancelled) {
          ended = true;
          throw this.#cancelled;
        }
        const event = this.#events.shift();
        if (event) {
          yield event;
          continue;
        }
        const terminal = this.#terminal;
        if (terminal) {
          ended = true;
          if (!terminal.ok) throw terminal.error;
          yield { kind: 'terminal', outcome: terminal.outcome };
          return;
        }
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
      }
    } finally {
      if (!ended) this.#drop();
    }
  }

  #cancel(): void {
    if (this.#terminal || this.#cancelled) return;
    this.#cancelled = new ConversationError('the caller stopped waiting for the prompt; the prompt goes on', {
      kind: 'cancelled',
      context: { operation: 'prompt', phase: 'delivery' },
      cause: this.#signal?.reason,
    });
    this.#drop();
    this.#notify();
  }

  #drop(): void {
    if (this.#dropped || this.#terminal) return;
    this.#dropped = true;
    this.#events.length = 0;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    this.#onDrop();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
