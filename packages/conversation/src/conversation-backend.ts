import type { PromptOutcome } from './prompt-outcome.js';

/** What to ask the agent server. */
export type PromptRequest = {
  readonly text: string;
  /** Agent name on the server, if not its default. */
  readonly agent?: string;
  readonly model?: { readonly providerID: string; readonly modelID: string };
};

/**
 * One event of a prompt's stream. The last event is always exactly one `terminal`,
 * unless the stream ends with a thrown `ConversationError` instead.
 */
export type ConversationEvent =
  | {
      readonly kind: 'part';
      readonly messageId: string;
      readonly partId: string;
      readonly partType: string;
      readonly text: string | null;
    }
  | {
      readonly kind: 'delta';
      readonly messageId: string;
      readonly partId: string;
      readonly field: string;
      readonly delta: string;
    }
  | { readonly kind: 'status'; readonly status: string }
  | { readonly kind: 'terminal'; readonly outcome: PromptOutcome };

/**
 * The events of one prompt. Iterate it once; it yields deltas and ends with exactly one
 * terminal: a `terminal` event, or a thrown `ConversationError`. Leaving the loop early
 * (or aborting the signal given to `prompt`) drops the observer: the prompt itself goes
 * on, and its record durably says nobody waits for it any more.
 */
export interface PromptStream extends AsyncIterable<ConversationEvent> {
  /** The client-chosen id of the user message (the idempotency anchor). */
  readonly messageId: string;
  /** Consumes the stream and resolves to its terminal outcome (the unary form). */
  result(): Promise<PromptOutcome>;
}

/**
 * What `abort` did: nothing was in flight (`idle`), the native prompt was aborted and
 * its record cleared (`aborted`), or a recorded terminal was cleared (`settled`).
 */
export type AbortResult =
  | { readonly kind: 'idle' }
  | { readonly kind: 'aborted'; readonly messageId: string }
  | { readonly kind: 'settled'; readonly messageId: string; readonly outcome: PromptOutcome };

/**
 * A conversation with an external agent server whose in-flight prompt is tracked in a
 * transactional store, so that an abort can reconcile it even after the original
 * observer, or the process, is gone.
 */
export interface ConversationBackend {
  /** The server's session id of this conversation. */
  id(): string;
  /** Sends a prompt and streams its events, ending in exactly one terminal. */
  prompt(request: PromptRequest, options?: { readonly signal?: AbortSignal }): PromptStream;
  /** The unary form of `prompt`: resolves to the terminal outcome. */
  send(request: PromptRequest, options?: { readonly signal?: AbortSignal }): Promise<PromptOutcome>;
  /** Aborts the in-flight prompt and reconciles its durable record. */
  abort(options?: { readonly signal?: AbortSignal }): Promise<AbortResult>;
}
