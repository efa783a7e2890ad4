import { type LeaseView, sameOwner, type WriterStamp } from './invocation-owner.js';
import { ruleStateCached } from './load-rule-state.js';
import { maxInlineChars } from './postgres-pipeline.js';
import type { RuleCache } from './rule-cache.js';
import { RuleRefusal } from './rule-refusal.js';
import type { StagedWrite, WriteOutcome } from './staged-write.js';
import { checkWriterLease, startsLeasedWork } from './writer-lease-rule.js';

/** Room per write for the columns beside its body, in `maxInlineChars`' units. */
const rowOverhead = 1024;

/**
 * Whether a batch may go as one message on a store that can (PostgreSQL's
 * `oneTripOpening`): the writer's cache holds the chain's head it last saw and
 * everything the batch's rules read, so the whole transaction — `BEGIN`, the chain's
 * lock, the head's guard, the writes, `COMMIT` — is known before anything is sent.
 * Not when:
 * - the cache lacks something (a first batch, a failure, a session another writer
 *   touched), or the last refreshes saw other writers commit (`cache.quietRefreshes`):
 *   a guess of the head would likely be stale, and a stale guess costs a trip;
 * - the rules read the clock or other hosts' leases (a takeover, an expiry), or a write
 *   changes an approval's row and checks the answer (a decision, a dispatch or rejection
 *   of a requested operation): those need an answer inside the transaction. A write
 *   that starts leased work (a T1 or an opening under a lease) fits when
 *   `inMessage` — the store checks the writer's own lease in the message
 *   (`postgresLeaseCheck`), and the opening's invocation or the dispatch's operation is
 *   taken for new, its table's key checking it (the run's later writes in the batch are
 *   judged on the opening's effect) — and all such writes of the batch are under one
 *   stamp. So does an opening in a session the cache does not know, when its group was
 *   built on that session's empty history (`commitTogether`'s `onHead`): the session
 *   is taken for new and added to `fresh`, whose sessions the store checks hold no fact
 *   (`LogDialect.freshSessions`) — a new session's first turn costs no read either;
 * - the batch's values are too large to be written out as literals.
 */
export function oneTripFits(
  cache: RuleCache,
  batch: readonly StagedWrite[],
  { inMessage = false, fresh }: { readonly inMessage?: boolean; readonly fresh?: Set<string> } = {},
): boolean {
  if (cache.head === undefined || cache.quietRefreshes < cache.quietNeeded) return false;
  let size = 0;
  let leased: WriterStamp | undefined;
  const opened = new Set<string>();
  for (const staged of batch) {
    if (!ruleStateCached(cache, staged, { inMessage, opened, fresh }) || answersInside(cache, staged)) {
      return false;
    }
    if (startsLeasedWork(staged)) {
      // One lease checked per message: writes under two stamps take the two-trip path.
      if (leased !== undefined && !sameOwner(leased, staged.writer)) return false;
      leased = staged.writer;
    }
    size += staged.body.length + (staged.result?.text.length ?? 0) + rowOverhead;
  }
  return size <= maxInlineChars;
}

/** Whether the rules of `staged` change an approval's row and check what changed. */
function answersInside(cache: RuleCache, staged: StagedWrite): boolean {
  const { fact, invocation } = staged.event;
  if (fact.kind === 'approval_decided') return true;
  if (fact.kind !== 'tool_dispatched' && fact.kind !== 'tool_rejected') return false;
  return cache.operation(invocation.sessionId, fact.operationId)?.state === 'requested';
}

/**
 * The leases of a one-message batch that starts leased work: its writer's own is checked
 * by the store (`LogDialect.leaseCheck`); the rules of such a batch read no clock.
 */
export const storeChecksLease: LeaseView = { now: Number.NaN, hosts: new Map(), checkedByStore: true };

/**
 * The refusals `lease` gives the writes of `batch` that start leased work (an array with
 * holes), and the positions of the others.
 */
export function refuseLeasedWork(
  batch: readonly StagedWrite[],
  lease: LeaseView,
): { refused: WriteOutcome[]; rest: number[] } {
  const refused: WriteOutcome[] = new Array(batch.length);
  const rest: number[] = [];
  batch.forEach((staged, index) => {
    try {
      checkWriterLease(staged, lease);
    } catch (error) {
      if (!(error instanceof RuleRefusal)) throw error;
      refused[index] = { refused: { code: error.code, message: error.message } };
      return;
    }
    // Live by this view (it cannot be, as the store refused it): the store checks again.
    rest.push(index);
  });
  return { refused, rest };
}
