import { canonicalJson, contentDigest } from './canonical-json.js';
import type { JsonValue } from './json-value.js';

/**
 * The digest of a call's input: `contentDigest(canonicalJson(input))`. An approval
 * names it, and the log recomputes it from a dispatched call inside the write
 * transaction, so only the input a person approved can be dispatched.
 */
export function callInputDigest(input: JsonValue): string {
  return contentDigest(canonicalJson(input));
}
