import { EMPTY_DIGEST } from './log-prefix.js';
import type { RuleCache } from './rule-cache.js';
import { RuleRefusal } from './rule-refusal.js';
import type { StagedWrite } from './staged-write.js';

/**
 * The rule of a conditional group (`commitTogether`'s `onHead`): its writes share one
 * head object, judged when the first of them comes up — before any of the group is
 * applied — against the head of that write's session as the rules' state has it (read in
 * the transaction, or cached under the store's check that nobody else wrote). The
 * verdict stands for the rest of the group. `verdicts` lives for one try of a batch.
 */
export function checkOnHead(staged: StagedWrite, cache: RuleCache, verdicts: Map<object, boolean>): void {
  const expected = staged.onHead;
  if (expected === undefined) return;
  let holds = verdicts.get(expected);
  if (holds === undefined) {
    const head = cache.sessions.get(staged.event.invocation.sessionId)?.head;
    holds =
      (head?.sequence ?? 0) === expected.highWater && (head?.digest ?? EMPTY_DIGEST) === expected.digest;
    verdicts.set(expected, holds);
  }
  if (!holds) {
    throw new RuleRefusal(
      'session_moved',
      `session ${staged.event.invocation.sessionId} no longer ends at sequence ${expected.highWater}: another writer appended to it after this group was built on it`,
    );
  }
}
