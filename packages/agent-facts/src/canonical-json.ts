import { hash } from 'node:crypto';
import { FactumError } from './factum-error.js';

/**
 * The canonical text of a JSON value (RFC 8785: sorted keys, no whitespace, one
 * spelling per number). Equal values give equal text on every host and store, which
 * is what makes digests comparable across SQLite and PostgreSQL.
 *
 * The text is the `canonicalize` package's (the scheme's reference implementation, our
 * tests' oracle), written without its per-level string rebuilding: the log canonicalizes
 * every fact, every result and every message of a request, and this is about 1.4× cheaper.
 */
export function canonicalJson(value: unknown): string {
  const prepared = ordered(value);
  const text = prepared === REORDERED ? serialize(value) : JSON.stringify(prepared);
  if (text === undefined) {
    throw new FactumError('not_json', 'value has no JSON form (undefined, a function or a symbol)');
  }
  return text;
}

/** A key JavaScript enumerates before all others, in numeric order rather than RFC 8785's. */
const INDEX = /^(?:0|[1-9]\d{0,9})$/;

/** Whether JavaScript orders `key` as an array index: only a key starting with a digit can be one. */
function isIndex(key: string): boolean {
  const first = key.charCodeAt(0);
  return first >= 48 && first <= 57 && INDEX.test(key);
}

/** Stands for a value holding an object whose keys JavaScript would reorder. */
const REORDERED = Symbol('reordered');

/**
 * `value` as `JSON.stringify` writes canonically: the same value where every object's
 * keys already come in order (the common case: nothing copied), else a copy whose keys
 * do — or `REORDERED` when an object has keys no object can hold in RFC 8785's order
 * (array indexes), which `serialize` then writes. Refuses what RFC 8785 refuses (a
 * number that is not finite); asks `toJSON` as `JSON.stringify` would.
 */
function ordered(value: unknown): unknown {
  if (typeof value === 'number') return finite(value);
  if (typeof value !== 'object' || value === null) return value;
  const toJson = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJson === 'function') return ordered(toJson.call(value));
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index += 1) {
      const item = value[index];
      const next = ordered(item);
      if (next === REORDERED) return REORDERED;
      if (next !== item && copy === undefined) copy = value.slice(0, index);
      copy?.push(next);
    }
    return copy ?? value;
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object);
  let sorted = true;
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index]!;
    if (isIndex(key)) return REORDERED;
    if (index > 0 && keys[index - 1]! > key) sorted = false;
  }
  let copy: Record<string, unknown> | undefined;
  if (!sorted) {
    sortKeys(keys);
    copy = {};
  }
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index]!;
    const member = object[key];
    const next = ordered(member);
    if (next === REORDERED) return REORDERED;
    if (next !== member && copy === undefined) {
      copy = {};
      for (let before = 0; before < index; before += 1) copy[keys[before]!] = object[keys[before]!];
    }
    if (copy !== undefined) copy[key] = next;
  }
  return copy ?? object;
}

/** Past this many keys an object's keys are sorted by `sort()`, whose cost grows as n log n. */
const FEW_KEYS = 16;

/**
 * Sorts an object's keys in place by UTF-16 code units, as `sort()` does. A fact's
 * objects have a few keys each: an insertion sort orders them without the work array
 * `sort()` allocates (measured: canonical JSON of one event of each kind 5.0 → 4.0 µs).
 */
function sortKeys(keys: string[]): void {
  if (keys.length > FEW_KEYS) {
    keys.sort();
    return;
  }
  for (let index = 1; index < keys.length; index += 1) {
    const key = keys[index]!;
    let at = index - 1;
    while (at >= 0 && keys[at]! > key) {
      keys[at + 1] = keys[at]!;
      at -= 1;
    }
    keys[at + 1] = key;
  }
}

/** A number RFC 8785 can write: NaN and the infinities are refused. */
function finite(value: number): number {
  if (!Number.isFinite(value))
    throw new Error(Number.isNaN(value) ? 'NaN is not allowed' : 'Infinity is not allowed');
  return value;
}

/**
 * One value's canonical text, member by member, or `undefined` for what JSON has no
 * form for: in an array that is `null`, in an object its member is left out.
 */
function serialize(value: unknown): string | undefined {
  if (typeof value === 'number') return JSON.stringify(finite(value));
  // A string, a boolean, null; undefined, a function or a symbol (no form); a bigint (a TypeError).
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  const toJson = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJson === 'function') return serialize(toJson.call(value));
  if (Array.isArray(value)) return `[${value.map((item) => serialize(item) ?? 'null').join(',')}]`;
  const object = value as Record<string, unknown>;
  const members: string[] = [];
  for (const key of Object.keys(object).sort()) {
    const member = serialize(object[key]);
    if (member !== undefined) members.push(`${JSON.stringify(key)}:${member}`);
  }
  return `{${members.join(',')}}`;
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
