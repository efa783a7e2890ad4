import { contentDigest, IdempotencyKeySchema } from '@factum/agent-facts';
import { CliError } from './cli-error.js';

/**
 * `--idempotency-key <k>`: the run's key, 1 to 255 visible ASCII characters, or
 * `undefined` without the flag. A malformed key is a usage error; nothing runs.
 */
export function idempotencyKeyFrom(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const parsed = IdempotencyKeySchema.safeParse(String(value));
  if (!parsed.success) {
    throw new CliError('usage', '--idempotency-key takes 1 to 255 visible ASCII characters, without spaces');
  }
  return parsed.data;
}

/**
 * The session a keyed run uses when `--session` names none: one derived from the key,
 * so the same command run again finds the same session, where the key is kept.
 */
export function keyedSession(key: string): string {
  return `session-${contentDigest(key).slice('sha256:'.length, 'sha256:'.length + 16)}`;
}
