import type { ModelStep } from '@factum/agent-facts';
import type { ErrorContext } from './map-http-error.js';
import type { ModelRequest } from './model-request.js';
import type { ProviderConfig } from './provider-config.js';
import type { SseEvent } from './sse-reader.js';
import type { StepBuilder } from './step-builder.js';

/**
 * Reads one streamed answer. `event` throws a `ModelError` for anything the wire does
 * not allow; `finish` throws a `truncated` protocol error when the terminal event never
 * came.
 */
export interface StreamDecoder {
  /** True once the terminal event arrived; anything after it is ignored. */
  readonly complete: boolean;
  event(event: SseEvent): void;
  finish(): ModelStep;
}

/** One wire format: where to send, what to send, how to read the answer. */
export interface ProviderAdapter {
  /** Path below `baseUrl`. */
  readonly path: string;
  /** Headers the wire needs; the config's `headers` override them. */
  readonly headers: Readonly<Record<string, string>>;
  /** The wire body before `providerOptions` and `bodyOverlay` are merged in. */
  body(provider: ProviderConfig, request: ModelRequest): Record<string, unknown>;
  /** The headers that carry the key; nothing else may hold it. */
  authHeaders(apiKey: string | undefined): Record<string, string>;
  decoder(builder: StepBuilder, context: ErrorContext): StreamDecoder;
}

/** `authorization: Bearer <key>`, or nothing without a key. */
export function bearerAuth(apiKey: string | undefined): Record<string, string> {
  return apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` };
}
