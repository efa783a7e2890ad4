import type { Context } from 'hono';
import type { z } from 'zod';
import { ServerError } from './server-error.js';

/**
 * Reads and parses a JSON body with `schema`. An empty body counts as `{}` so the
 * bodiless actions accept both. Throws `ServerError` 400 naming the first bad path.
 */
export async function readJsonBody<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T>> {
  const text = await c.req.text();
  let value: unknown = {};
  if (text.trim() !== '') {
    try {
      value = JSON.parse(text);
    } catch {
      throw new ServerError('malformed_json', 'the request body is not JSON', { path: '' });
    }
  }
  return parseInput(schema, value, 'body');
}

/** Parses the query string with `schema`; throws `ServerError` 400 on a mismatch. */
export function readQuery<T extends z.ZodType>(c: Context, schema: T): z.infer<T> {
  return parseInput(schema, c.req.query(), 'query');
}

/** Parses the query string, every parameter as the list of its values, with `schema`; 400 on a mismatch. */
export function readQueries<T extends z.ZodType>(c: Context, schema: T): z.infer<T> {
  return parseInput(schema, c.req.queries(), 'query');
}

/** Parses a path parameter; throws `ServerError` 400 on a mismatch. */
export function readParam<T extends z.ZodType>(c: Context, name: string, schema: T): z.infer<T> {
  return parseInput(schema, c.req.param(name), name);
}

function parseInput<T extends z.ZodType>(schema: T, value: unknown, where: string): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue?.path.map(String).join('.') ?? '';
  throw new ServerError(
    'invalid_request',
    `${where}${path ? `.${path}` : ''}: ${issue?.message ?? 'does not match its schema'}`,
    { path },
  );
}
