import { canonicalJson, contentDigest } from '@factum/agent-facts';
import { anthropicMessagesAdapter } from './anthropic-messages-adapter.js';
import { chatCompletionsAdapter } from './chat-completions-adapter.js';
import { mergeBody } from './merge-body.js';
import type { ModelRequest } from './model-request.js';
import type { ProviderAdapter } from './provider-adapter.js';
import { apiKeyOf, endpointUrl, type ProviderConfig, type ProviderKind } from './provider-config.js';
import { responsesAdapter } from './responses-adapter.js';

/** Where a request goes and with which headers (its body is `wireBody`'s). */
export type WireTarget = {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
};

/** The adapter of a wire format. */
export function adapterFor(kind: ProviderKind): ProviderAdapter {
  switch (kind) {
    case 'openai_chat_completions':
      return chatCompletionsAdapter;
    case 'openai_responses':
      return responsesAdapter;
    case 'anthropic_messages':
      return anthropicMessagesAdapter;
    default:
      return kind satisfies never;
  }
}

/**
 * The body a request goes out with: the adapter's mapping, then `providerOptions`,
 * then the provider's `bodyOverlay` (later wins; plain objects merge deeply). `stream`
 * stays `true` whatever they say, because the executor only reads streams.
 */
export function wireBody(provider: ProviderConfig, request: ModelRequest): Record<string, unknown> {
  const adapter = adapterFor(provider.kind);
  const body = mergeBody(
    mergeBody(adapter.body(provider, request), request.providerOptions),
    provider.bodyOverlay,
  );
  body.stream = true;
  return body;
}

/**
 * URL and headers of a request. Header precedence: defaults < config `headers` < auth.
 * `url` may be passed when the caller already knows it (it caches the parse).
 */
export function wireTarget(provider: ProviderConfig, url?: string): WireTarget {
  const adapter = adapterFor(provider.kind);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'text/event-stream',
    ...adapter.headers,
  };
  for (const [name, value] of Object.entries(provider.headers ?? {})) headers[name.toLowerCase()] = value;
  Object.assign(headers, adapter.authHeaders(apiKeyOf(provider)));
  return { url: url ?? endpointUrl(provider.baseUrl, adapter.path), headers };
}

/**
 * `sha256:…` of the canonical wire body a request would be sent with. It covers the
 * model, messages, tools, options and overlay, and nothing secret (no headers, no key):
 * equal digests mean the provider was asked exactly the same thing.
 *
 * @example
 * ```ts
 * const inputDigest = requestDigest(provider, request);
 * ```
 */
export function requestDigest(provider: ProviderConfig, request: ModelRequest): string {
  return contentDigest(canonicalJson(wireBody(provider, request)));
}
