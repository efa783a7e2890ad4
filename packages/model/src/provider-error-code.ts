import type { ModelErrorCode } from './model-error.js';

/**
 * Provider error types and codes, by what they mean for a retry. Order matters: an
 * `insufficient_quota` error also says "rate limit" on some servers, and it must stay
 * final, because waiting does not buy credit.
 */
const classes: readonly (readonly [RegExp, ModelErrorCode])[] = [
  [/insufficient_quota|quota_exceeded|billing|payment_required|credit/, 'quota_exceeded'],
  [/content_filter|content_policy|policy_violation|invalid_prompt|moderation|safety/, 'content_filtered'],
  [
    /context_length|context_window|string_above_max_length|request_too_large|tokens_exceeded/,
    'context_overflow',
  ],
  [/rate_limit|too_many_requests/, 'rate_limited'],
  [/authentication|permission|invalid_api_key|unauthori[sz]ed|forbidden/, 'auth'],
  [/overloaded|server_error|api_error|internal|unavailable|timeout|capacity/, 'server'],
  [/invalid_request|not_found|invalid_value|bad_request|unsupported/, 'bad_request'],
];

/**
 * The error code a provider's own words map to (`type` and `code` of an OpenAI or
 * Anthropic error object, lower-cased and joined), or `undefined` when none says.
 *
 * @example
 * ```ts
 * providerErrorCode('insufficient_quota insufficient_quota'); // 'quota_exceeded'
 * providerErrorCode('overloaded_error'); // 'server'
 * ```
 */
export function providerErrorCode(words: string): ModelErrorCode | undefined {
  if (words === '') return undefined;
  const lower = words.toLowerCase();
  for (const [pattern, code] of classes) if (pattern.test(lower)) return code;
  return undefined;
}
