/**
 * The digest functions alone, without the fact schemas: for code that chains stored
 * bytes (a log's writer thread) and should not load a schema library to do it.
 */

export { callInputDigest } from './call-input-digest.js';
export { chainDigest, chainLink, contentDigest } from './canonical-json.js';
