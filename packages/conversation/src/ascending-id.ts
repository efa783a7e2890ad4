import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const WRAP = 2n ** 48n;

/**
 * Ids in the OpenCode server's own scheme, so that ours sort among the server's by
 * creation: `<prefix>_` + 12 hex digits of `(ms · 4096 + counter) mod 2^48` (the counter
 * restarts every millisecond) + 14 random base-62 characters. The server orders a
 * session's messages by id; an id made in another scheme would sort out of place.
 *
 * @example
 * ```ts
 * const newId = ascendingIds();
 * newId('msg'); // 'msg_23d8728ed001bxrG7ZlLxX02nQ'
 * ```
 */
export function ascendingIds(now: () => number = Date.now): (prefix: string) => string {
  let lastMs = 0;
  let counter = 0;
  return (prefix) => {
    const ms = now();
    if (ms !== lastMs) {
      lastMs = ms;
      counter = 0;
    }
    counter += 1;
    const value = (BigInt(ms) * 0x1000n + BigInt(counter)) % WRAP;
    return `${prefix}_${value.toString(16).padStart(12, '0')}${randomBase62(14)}`;
  };
}

function randomBase62(length: number): string {
  const bytes = randomBytes(length);
  let text = '';
  for (const byte of bytes) text += BASE62[byte % 62];
  return text;
}
