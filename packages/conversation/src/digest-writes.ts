import { canonicalJson, contentDigest } from '@factum/agent-facts';
import type { PromptWrite } from './prompt-store.js';

/**
 * The digest a commit receipt carries: SHA-256 over the canonical JSON of the
 * transaction's writes, in order. Stores and the conversation compute it the same way,
 * so a receipt of some other transaction can never confirm this one.
 */
export function digestWrites(writes: readonly PromptWrite[]): string {
  return contentDigest(canonicalJson(writes));
}
