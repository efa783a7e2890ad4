import { ModelError } from './model-error.js';
import type { ProviderKind } from './provider-config.js';
import type { SecretRedactor } from './secret-redactor.js';
import { asObject, asString, quote } from './wire-json.js';

/** What an error message may say about the request that failed (nothing secret). */
export type ErrorContext = {
  readonly baseUrl: string;
  readonly kind: ProviderKind;
  readonly model: string;
  readonly hasApiKey: boolean;
  readonly redactor: SecretRedactor;
};

/** A non-2xx answer: its status, headers and (bounded) body text. */
export type HttpFailure = {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
};

const overflowPattern =
  /context_length_exceeded|context length|context window|maximum context|prompt is too long|input is too long|too many tokens|string_above_max_length|request_too_large/i;

/** Turns a non-2xx response into a typed error whose message says what to do. */
export function mapHttpError(
  failure: HttpFailure,
  context: ErrorContext,
  now: number = Date.now(),
): ModelError {
  const { status } = failure;
  const detail = providerDetail(failure.body, context);
  const from = `${status} from ${context.baseUrl}`;
  const said = detail === '' ? '' : ` (provider said: ${detail})`;
  if (status === 401) {
    const fix = context.hasApiKey
      ? `check the API key (set ${keyVariable(context.kind)} or pass auth.apiKey)`
      : 'this provider needs an API key: pass auth: { apiKey }';
    return new ModelError('auth', `${from}: ${fix}${said}`, { status });
  }
  if (status === 403) {
    return new ModelError(
      'auth',
      `${from}: the key may not use model "${context.model}" here; check the key's project, organisation and permissions${said}`,
      { status },
    );
  }
  if (status === 429) {
    const retryAfterMs = retryAfter(failure.headers, now);
    const when =
      retryAfterMs === undefined ? 'slow down or raise the rate limit' : `retry after ${retryAfterMs} ms`;
    return new ModelError('rate_limited', `${from}: rate limited; ${when}${said}`, { status, retryAfterMs });
  }
  if (status === 413 || ((status === 400 || status === 422) && overflowPattern.test(failure.body))) {
    return new ModelError(
      'context_overflow',
      `${from}: the request does not fit the context window of "${context.model}"; shorten the conversation or lower maxOutputTokens${said}`,
      { status },
    );
  }
  if (status >= 500) {
    const retryAfterMs = retryAfter(failure.headers, now);
    return new ModelError('server', `${from}: the provider failed${said}`, { status, retryAfterMs });
  }
  const hint =
    status === 404
      ? `; check baseUrl (the API root, e.g. ${exampleBase(context.kind)}) and the model name "${context.model}"`
      : '';
  return new ModelError('bad_request', `${from}: the provider refused the request${hint}${said}`, { status });
}

/**
 * An error the provider reported inside a 200 stream (OpenAI `{"error": …}`, Anthropic
 * `event: error`, Responses `response.failed`), mapped by its type or code.
 */
export function mapStreamError(error: unknown, context: ErrorContext): ModelError {
  const object = asObject(error) ?? {};
  const type = `${asString(object.type) ?? ''} ${asString(object.code) ?? ''}`.trim();
  const message = context.redactor.redact(asString(object.message) ?? JSON.stringify(error) ?? '');
  const text = `${context.baseUrl} reported an error mid-stream (${type || 'untyped'}): ${quote(message)}`;
  if (/rate_limit/.test(type)) return new ModelError('rate_limited', text);
  if (/context_length|context_window/.test(type) || overflowPattern.test(message)) {
    return new ModelError('context_overflow', `${text}; shorten the conversation`);
  }
  if (/authentication|permission|invalid_api_key/.test(type)) return new ModelError('auth', text);
  if (/invalid_request/.test(type)) return new ModelError('bad_request', text);
  return new ModelError('server', text);
}

/** Milliseconds to wait from `retry-after-ms`, or `retry-after` as seconds or an HTTP date. */
export function retryAfter(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  now: number = Date.now(),
): number | undefined {
  const milliseconds = Number(first(headers['retry-after-ms']));
  if (first(headers['retry-after-ms']) !== undefined && Number.isFinite(milliseconds) && milliseconds >= 0) {
    return Math.ceil(milliseconds);
  }
  const value = first(headers['retry-after']);
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.ceil(seconds * 1000) : undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function providerDetail(body: string, context: ErrorContext): string {
  const trimmed = body.trim();
  if (trimmed === '') return '';
  let message: string | undefined;
  try {
    const parsed = asObject(JSON.parse(trimmed));
    const error = parsed?.error;
    message = asString(asObject(error)?.message) ?? asString(error) ?? asString(parsed?.message);
  } catch {
    // Not JSON: quote the text itself.
  }
  return quote(context.redactor.redact(message ?? trimmed));
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function keyVariable(kind: ProviderKind): string {
  return kind === 'anthropic_messages' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY';
}

function exampleBase(kind: ProviderKind): string {
  return kind === 'anthropic_messages' ? 'https://api.anthropic.com/v1' : 'https://api.openai.com/v1';
}
