import type { z } from 'zod';
import { FactParseError } from './fact-parse-error.js';

/** Parses `value` with `schema`, or throws a `FactParseError` naming the bad path. */
export function parseWith<T extends z.ZodType>(schema: T, what: string, value: unknown): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    path: issue.path
      .map((key) => (typeof key === 'number' ? `[${key}]` : String(key)))
      .join('.')
      .replaceAll('.[', '['),
    message: issue.message,
  }));
  throw new FactParseError(what, issues, { cause: result.error });
}
