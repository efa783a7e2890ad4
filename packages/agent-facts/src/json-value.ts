import { z } from 'zod';

/** A JSON value: what tool inputs and results are made of. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

const maxDepth = 512;

/**
 * Whether `value` is plain JSON data, checked without rebuilding it. zod's own
 * `z.json()` rebuilds objects and silently drops an own key named `__proto__`, which
 * `JSON.parse` keeps: the effect would then run on an input other than the one its
 * dispatch recorded. Here the value passes through untouched.
 */
export function isJsonValue(value: unknown, depth = 0): value is JsonValue {
  if (value === null) return true;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (depth >= maxDepth) return false;
      if (Array.isArray(value)) return value.every((item) => isJsonValue(item, depth + 1));
      const prototype = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) return false;
      return Object.values(value).every((item) => isJsonValue(item, depth + 1));
    }
    default:
      return false;
  }
}

/** The schema of a JSON value; the parsed value is the input itself, never a copy. */
export const JsonValueSchema = z.custom<JsonValue>((value) => isJsonValue(value), {
  message: 'expected a JSON value (no undefined, functions, class instances, NaN or Infinity)',
});
