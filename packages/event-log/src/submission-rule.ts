import type { Invocation } from '@factum/agent-facts';
import type { RuleState } from './append-rules.js';
import { RuleRefusal } from './rule-refusal.js';

/**
 * A submitter's key opens at most one invocation in its session: a second opening
 * with it is refused `duplicate_submission`, with nothing written, and the caller reads
 * the first one back (`EventLog.submission`). Judged inside the write transaction, so
 * submitters on several hosts cannot both win; the unique index on
 * `invocations (session_id, idempotency_key)` backs the rule up.
 */
export function checkSubmission(
  invocation: Invocation,
  key: string | undefined,
  state: RuleState,
): { readonly submission?: string } {
  if (key === undefined) return {};
  const holder = state.submission(invocation.sessionId, key);
  if (holder !== undefined) {
    throw new RuleRefusal(
      'duplicate_submission',
      `idempotency key ${JSON.stringify(key)} already opened invocation ${holder} in session ${invocation.sessionId}: read that run instead of starting another`,
    );
  }
  return { submission: key };
}
