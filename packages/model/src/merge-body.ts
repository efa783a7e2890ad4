import { asObject } from './wire-json.js';

/**
 * `base` with `overlay` merged in: plain objects merge key by key, anything else
 * (arrays, strings, null) replaces. Neither input is changed.
 */
export function mergeBody(
  base: Readonly<Record<string, unknown>>,
  overlay: Readonly<Record<string, unknown>> | undefined,
): Record<string, unknown> {
  const result: Record<string, unknown> = { ...base };
  if (overlay === undefined) return result;
  for (const [key, value] of Object.entries(overlay)) {
    const current = asObject(result[key]);
    const next = asObject(value);
    result[key] = current !== undefined && next !== undefined ? mergeBody(current, next) : value;
  }
  return result;
}
