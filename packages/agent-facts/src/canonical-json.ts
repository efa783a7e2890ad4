import { hash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import { FactumError } from './factum-error.js';

type Serialize = (value: unknown) => string | undefined;
// The package is CommonJS with an ES-style declaration: Node hands the function over
// as the default import, while the declaration describes it as `.default`.
const canonicalize: Serialize =
  (canonicalizeModule as unknown as { default?: Serialize }).default ??
  (canonicalizeModule as unknown as Serialize);

/**
 * The canonical text of a JSON value (RFC 8785: sorted keys, no whitespace, one
 * spelling per number). Equal values give equal text on every host and store, which
 * is what makes digests comparable across SQLite and PostgreSQL.
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) {
    throw new FactumError('not_json', 'value has no JSON form (undefined, a function or a symbol)');
  }
  return text;
}

/**
 * `sha256:` followed by the hex SHA-256 of the bytes (a string is hashed as UTF-8).
 * One-shot `crypto.hash` costs less than half a `createHash` object; a log hashes every
 * event three times.
 */
export function contentDigest(content: Uint8Array | string): string {
  return `sha256:${hash('sha256', content, 'hex')}`;
}

/**
 * One link of a digest chain: the digest of `previous` (or nothing, for the first
 * link) followed by the digest of this content. A chain's last link vouches for every
 * event before it.
 */
export function chainDigest(previous: string | undefined, content: string): string {
  return chainLink(previous, contentDigest(content));
}

/**
 * The same link from an already computed `contentDigest`: a log chaining one body into
 * several chains (global and per session) hashes the body once.
 */
export function chainLink(previous: string | undefined, digest: string): string {
  return contentDigest(`${previous ?? ''}\n${digest}`);
}
