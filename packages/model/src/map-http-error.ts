import { ModelError, type ModelErrorCode } from './model-error.js';
import type { ProviderKind } from './provider-config.js';
import { providerErrorCode } from './provider-error-code.js';
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

// Anthropic says an empty account in words only, under `invalid_request_error`.
const quotaPattern = /credit balance is too low|exceeded your current quota/i;

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
  const { detail, words } = providerDetail(failure.body, context);
  const from = `${status} from ${context.baseUrl}`;
  const said = detail === '' ? '' : ` (provider said: ${detail})`;
  // The provider's own error code says more than the status (OpenAI answers an empty
  // account with 429 `insufficient_quota`, which no wait will fix).
  const named = providerErrorCode(words);
  if (status === 402 || named === 'quota_exceeded' || quotaPattern.test(failure.body)) {
    return new ModelError('quota_exceeded', `${from}: ${quotaHint}${said}`, { status });
  }
  if (named === 'content_filtered' && status < 500) {
    return new ModelError('content_filtered', `${from}: ${filterHint}${said}`, { status });
  }
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
  if (
    status === 413 ||
    ((status === 400 || status === 422) &&
      (named === 'context_overflow' || overflowPattern.test(failure.body)))
  ) {
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

const quotaHint =
  'the account is out of quota or credit; check the plan and billing (retrying does not help)';
const filterHint =
  "the provider's content filter refused the request; change the request (retrying does not help)";

const streamHints: Readonly<Partial<Record<ModelErrorCode, string>>> = {
  quota_exceeded: `; ${quotaHint}`,
  content_filtered: `; ${filterHint}`,
  context_overflow: '; shorten the conversation',
};

/**
 * An error the provider reported inside a 200 stream (OpenAI `{"error": …}`, Responses
 * `error` and `response.failed`, Anthropic `event: error`), mapped by its type or code:
 * quota and content filter are final, rate limits and overload are retried.
 */
export function mapStreamError(error: unknown, context: ErrorContext): ModelError {
  const object = asObject(error) ?? {};
  const type = [asString(object.type), asString(object.code)]
    .filter((word) => word !== undefined && word !== '')
    .join(' ');
  const message = context.redactor.redact(asString(object.message) ?? JSON.stringify(error) ?? '');
  const text = `${context.baseUrl} reported an error mid-stream (${context.redactor.redact(type) || 'untyped'}): ${quote(message)}`;
  let code = providerErrorCode(type);
  if (code === undefined && overflowPattern.test(message)) code = 'context_overflow';
  if ((code === undefined || code === 'bad_request') && quotaPattern.test(message)) code = 'quota_exceeded';
  code ??= 'server';
  return new ModelError(code, `${text}${streamHints[code] ?? ''}`);
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

function providerDetail(body: string, context: ErrorContext): { detail: string; words: string } {
  const trimmed = body.trim();
  if (trimmed === '') return { detail: '', words: '' };
  let message: string | undefined;
  let words = '';
  try {
    const parsed = asObject(JSON.parse(trimmed));
    const error = parsed?.error;
    const object = asObject(error);
    message = asString(object?.message) ?? asString(error) ?? asString(parsed?.message);
    words = [asString(object?.type), asString(object?.code), asString(parsed?.type)]
      .filter((word) => word !== undefined)
      .join(' ');
  } catch {
    // Not JSON: quote the text itself.
  }
  return { detail: quote(context.redactor.redact(message ?? trimmed)), words };
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
