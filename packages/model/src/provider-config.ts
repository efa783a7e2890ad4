/** The wire formats the executor speaks. */
export type ProviderKind = 'openai_chat_completions' | 'openai_responses' | 'anthropic_messages';

/** How requests authenticate: a key sent as a header, or nothing (local servers). */
export type ProviderAuth = { readonly apiKey: string } | { readonly none: true };

/** Per-provider overrides of the executor's deadlines, in milliseconds. */
export type ProviderNetwork = {
  readonly timeoutMs?: number;
  readonly connectTimeoutMs?: number;
  readonly idleTimeoutMs?: number;
};

/**
 * What a provider can and cannot take. Everything is optional; the defaults suit the
 * provider's own API.
 * - `streamUsage` (chat completions, default true): send `stream_options.include_usage`.
 *   Turn it off for servers that reject unknown fields.
 * - `maxTokensField` (chat completions, default `max_tokens`): newer OpenAI models
 *   want `max_completion_tokens`.
 * - `systemRole` (chat completions and responses, default `system`): some models want
 *   system text under the `developer` role.
 */
export type ProviderCapabilities = {
  readonly streamUsage?: boolean;
  readonly maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  readonly systemRole?: 'system' | 'developer';
};

/**
 * Where and how to send model requests. `baseUrl` is the API root the paths are
 * appended to (`https://api.openai.com/v1` → `…/v1/chat/completions`); a query string
 * in it is kept. `headers` are sent with every request (the auth header wins over
 * them); `bodyOverlay` is merged into every body last, over `providerOptions`.
 *
 * @example
 * ```ts
 * const provider: ProviderConfig = {
 *   kind: 'openai_chat_completions',
 *   model: 'my-model',
 *   baseUrl: 'https://api.openai.com/v1',
 *   auth: { apiKey: process.env.OPENAI_API_KEY ?? '' },
 * };
 * ```
 */
export type ProviderConfig = {
  readonly kind: ProviderKind;
  readonly model: string;
  readonly baseUrl: string;
  readonly auth: ProviderAuth;
  readonly headers?: Readonly<Record<string, string>>;
  readonly network?: ProviderNetwork;
  readonly bodyOverlay?: Readonly<Record<string, unknown>>;
  readonly capabilities?: ProviderCapabilities;
};

/** The API key of a configuration, if it has one. */
export function apiKeyOf(config: ProviderConfig): string | undefined {
  return 'apiKey' in config.auth ? config.auth.apiKey : undefined;
}

/** `displayBaseUrl`'s answers for the few base URLs a process uses: every request asks. */
const displayed = new Map<string, string>();
const DISPLAYED_LIMIT = 64;

/**
 * `baseUrl` without user info or query string, which is where credentials hide when
 * they are not in headers (`?key=…`). Safe to print and to store.
 */
export function displayBaseUrl(baseUrl: string): string {
  let display = displayed.get(baseUrl);
  if (display === undefined) {
    display = withoutCredentials(baseUrl);
    if (displayed.size >= DISPLAYED_LIMIT) displayed.clear();
    displayed.set(baseUrl, display);
  }
  return display;
}

function withoutCredentials(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    url.username = '';
    url.password = '';
    url.search = '';
    url.hash = '';
    return url.toString().replace(/\/$/, '');
  } catch {
    return '(invalid baseUrl)';
  }
}

/**
 * The identity of a route for the log: kind, base URL (without credentials) and model.
 * Two configurations with the same identity reach the same model the same way; the
 * key is never part of it.
 *
 * @example
 * ```ts
 * routeIdentity(provider); // 'openai_chat_completions https://api.openai.com/v1 my-model'
 * ```
 */
export function routeIdentity(config: Pick<ProviderConfig, 'kind' | 'baseUrl' | 'model'>): string {
  return `${config.kind} ${displayBaseUrl(config.baseUrl)} ${config.model}`;
}

/** The URL of an endpoint below `baseUrl`, keeping the base's query string. */
export function endpointUrl(baseUrl: string, path: string): string {
  const url = new URL(baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${path}`;
  return url.toString();
}
