import { z } from 'zod';
import { FactParseError } from './fact-parse-error.js';

/**
 * Each schema `parseWith` was given, compiled by zod (`z.compile`) once it has parsed
 * `COMPILE_AFTER` values: a generated validator with the runtime parser's output and
 * issues — a failed check falls back to that parser for its issues — at about a tenth of
 * its cost on a turn's mix of facts. Events are compiled at the same point, one fact
 * kind at a time (see `RuntimeEvent.parse`). Compiling costs tens of milliseconds and
 * saves about 20 µs a fact inside a running engine, so it pays back after some 1,400
 * parses: a process that reads one run keeps the runtime parser, an engine compiles
 * within its first hundred turns.
 */
export const COMPILE_AFTER = 1_000;
const tiers = new WeakMap<z.ZodType, { uses: number; compiled?: z.ZodType }>();

function parserOf<T extends z.ZodType>(schema: T): T {
  let tier = tiers.get(schema);
  if (tier === undefined) {
    tier = { uses: 0 };
    tiers.set(schema, tier);
  }
  if (tier.compiled !== undefined) return tier.compiled as T;
  tier.uses += 1;
  if (tier.uses < COMPILE_AFTER) return schema;
  tier.compiled = z.compile(schema);
  return tier.compiled as T;
}

/** Parses `value` with `schema`, or throws a `FactParseError` naming the bad path. */
export function parseWith<T extends z.ZodType>(schema: T, what: string, value: unknown): z.output<T> {
  return checked(parserOf(schema).safeParse(value), what);
}

/** The parsed value, or a `FactParseError` naming the bad path of `what`. */
export function checked<T>(result: z.ZodSafeParseResult<T>, what: string): T {
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
