import { z } from 'zod';
import { FactParseError } from './fact-parse-error.js';

/**
 * Each schema `parseWith` was given, compiled by zod (`z.compile`): a generated validator
 * with the runtime parser's output and issues — a failed check falls back to that parser
 * for its issues — and about a tenth of its cost on a turn's mix of facts. Compiled on
 * first use, so a process that never parses pays nothing.
 */
const compiled = new WeakMap<z.ZodType, z.ZodType>();

function compiledOf<T extends z.ZodType>(schema: T): T {
  let fast = compiled.get(schema) as T | undefined;
  if (fast === undefined) {
    fast = z.compile(schema);
    compiled.set(schema, fast);
  }
  return fast;
}

/** Parses `value` with `schema`, or throws a `FactParseError` naming the bad path. */
export function parseWith<T extends z.ZodType>(schema: T, what: string, value: unknown): z.output<T> {
  const result = compiledOf(schema).safeParse(value);
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
