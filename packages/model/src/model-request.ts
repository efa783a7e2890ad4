import type { ModelPart, ToolRejection } from '@factum/agent-facts';

/** What a tool call came to, as the model is told about it. */
export type ModelToolOutcome =
  | { readonly kind: 'value'; readonly value: unknown }
  /** Text sent as it is: a result already rendered (and bounded) by the caller. */
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'error'; readonly message: string }
  | { readonly kind: 'rejected'; readonly rejection: ToolRejection };

/** One message of the conversation a model request carries, in the engine's vocabulary. */
export type ModelMessage =
  | { readonly role: 'system'; readonly content: string }
  | { readonly role: 'user'; readonly content: string }
  | { readonly role: 'assistant'; readonly parts: readonly ModelPart[] }
  | {
      readonly role: 'tool';
      readonly callId: string;
      readonly name: string;
      readonly result: ModelToolOutcome;
    };

/** A tool the model may call. `inputSchema` is a JSON Schema object. */
export type ModelToolSpec = {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
};

/**
 * One model request, independent of the provider's wire. `providerOptions` are merged
 * into the wire body (deeply, for plain objects), then the provider's `bodyOverlay`.
 */
export type ModelRequest = {
  readonly messages: readonly ModelMessage[];
  readonly tools: readonly ModelToolSpec[];
  readonly providerOptions?: Readonly<Record<string, unknown>>;
  readonly maxOutputTokens?: number;
};
