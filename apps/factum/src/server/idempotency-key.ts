import { canonicalJson, contentDigest, IdempotencyKeySchema } from '@factum/agent-facts';
import type { RunningInvocation } from '@factum/engine';
import type { Context } from 'hono';
import { ServerError } from './server-error.js';

/** The header a client names its submission with, as Stripe-style APIs do. */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** Set on an answer that is the first submission's run, not a new one. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/**
 * The request's `Idempotency-Key` (1 to 255 visible ASCII characters), or `undefined`
 * without one. A malformed key is a 400 that names the header; nothing starts.
 */
export function readIdempotencyKey(c: Context): string | undefined {
  const value = c.req.header(IDEMPOTENCY_HEADER);
  if (value === undefined) return undefined;
  const parsed = IdempotencyKeySchema.safeParse(value);
  if (!parsed.success) {
    throw new ServerError(
      'invalid_request',
      `${IDEMPOTENCY_HEADER}: 1 to 255 visible ASCII characters, without spaces`,
      { path: IDEMPOTENCY_HEADER },
    );
  }
  return parsed.data;
}

/**
 * The digest of a parsed request body, recorded with a keyed opening: a retry whose
 * body differs in anything (the message, the tool mode, a flag) is then a conflict.
 */
export function requestFingerprint(body: unknown): string {
  return contentDigest(canonicalJson(body));
}

/**
 * The answer to a repeated submission: the first run's invocation, with its recorded
 * outcome (200) when it has ended, or 202 while it runs (`GET /invocations/:id/outcome`
 * waits for it).
 */
export function replayed(c: Context, running: RunningInvocation): Response {
  c.header(REPLAYED_HEADER, 'true');
  const { invocation, recorded } = running;
  return recorded === undefined
    ? c.json({ invocation }, 202)
    : c.json({ invocation, outcome: recorded }, 200);
}
