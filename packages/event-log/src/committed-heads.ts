import type { SessionHead } from './session-head.js';
import type { PendingWrite } from './settle-batch.js';
import type { BatchResult } from './staged-write.js';

/** Sessions remembered at most; past it, the memory starts over (every answer a miss). */
const limit = 10_000;

/**
 * Where each session ended after this log's last commit to it, from the receipts of its
 * committed batches. Another process's writes are not seen: an answer says what this log
 * wrote last, not that nobody wrote since. A batch that failed forgets its sessions
 * (its outcome may be unknown).
 */
export class CommittedHeads {
  readonly #heads = new Map<string, SessionHead>();

  get(sessionId: string): SessionHead | undefined {
    return this.#heads.get(sessionId);
  }

  record(batch: readonly PendingWrite[], result: BatchResult): void {
    if (result.kind !== 'committed') {
      for (const { staged } of batch) this.#heads.delete(staged.event.invocation.sessionId);
      return;
    }
    if (this.#heads.size > limit) this.#heads.clear();
    result.outcomes.forEach((outcome, index) => {
      if (!('stored' in outcome)) return;
      const { sequence, sessionDigest } = outcome.stored;
      const sessionId = batch[index]!.staged.event.invocation.sessionId;
      if (sessionDigest === undefined) this.#heads.delete(sessionId);
      else this.#heads.set(sessionId, { highWater: sequence, digest: sessionDigest });
    });
  }
}
