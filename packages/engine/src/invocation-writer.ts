import {
  CommitError,
  type CommitReceipt,
  type EventOrigin,
  type EventSink,
  EventWrite,
  type Fact,
  type Invocation,
  type ModelObservation,
  RuntimeEvent,
} from '@factum/agent-facts';
import { AppendRefusedError, type EventLog, type SessionHead } from '@factum/event-log';
import { mergeObservations } from './observation-merge.js';
import type { SessionProjection } from './session-projection.js';

/** How a writer commits the facts nobody has to wait for. */
export type WriterOptions = {
  readonly origin?: EventOrigin;
  /** Advanced by every fact this writer commits. */
  readonly projection?: SessionProjection;
  /**
   * Commit deferred facts at once, without waiting (a log tail sees a model step while
   * it streams), instead of letting them ride along with the next durable fact.
   */
  readonly eager?: boolean;
};

/**
 * Commits one invocation's facts to the log, in the order they are written. Only the
 * facts the run's promise depends on are waited for (`write`, and every `commit` of the
 * tools layer, for which this is the `EventSink`); a `defer`red fact — a model step's
 * request, observations and completion — is held in memory and committed in the same
 * transaction as the next fact that is waited for, in order, so a crash leaves either
 * all of them and that fact, or none. A deferred fact that the log refuses fails the
 * waited-for commit it rode with, as if that had failed.
 *
 * Deferred observations are recorded a piece of the stream at a time, not a delta at a
 * time (see `observe`): what rides in one commit is the same text or arguments, in
 * fewer facts.
 */
export class InvocationWriter implements EventSink {
  readonly #log: EventLog;
  readonly #invocation: Invocation;
  readonly #options: WriterOptions;
  #riders: EventWrite[] = [];
  /** Eager mode: deferred commits in flight, checked by the next waited-for commit. */
  #unwaited: Promise<CommitReceipt>[] = [];
  /** The invocation's opening while it rides along, and its commit once sent. */
  #opening: EventWrite | undefined;
  #openingCommit: Promise<CommitReceipt> | undefined;
  /** The session head the riding opening's first prompt was built on (see `openOn`). */
  #openingHead: SessionHead | undefined;
  /** The last deferred observation, not yet a fact while the next may extend it. */
  #observed: { readonly stepId: string; observation: ModelObservation } | undefined;

  constructor(log: EventLog, invocation: Invocation, options: WriterOptions = {}) {
    this.#log = log;
    this.#invocation = invocation;
    this.#options = options;
  }

  /**
   * Records the invocation's `invocation_opened` to ride with the run's first
   * waited-for commit (its first T1 or rejection, or its end), so a run that dies
   * before that leaves no trace: it had no effect. Eager, it is committed and waited
   * for at once (a tail of the log sees the run).
   */
  async open(fact: Fact & { kind: 'invocation_opened' }): Promise<void> {
    if (this.#options.eager) {
      await this.write(fact);
      return;
    }
    this.#opening = this.#plain(fact);
    this.#riders.push(this.#opening);
  }

  /**
   * The log's refusal of the invocation's opening (another process admitted the session
   * first, say), once the commit that carried it has settled; `undefined` if it was
   * accepted, not sent yet, or failed otherwise.
   */
  async openingRefusal(): Promise<unknown> {
    const commit = this.#openingCommit;
    if (commit === undefined) return undefined;
    return commit.then(
      () => undefined,
      (error: unknown) => error,
    );
  }

  /**
   * Records `fact` without waiting: it becomes durable with the next waited-for commit
   * (or, eager, in a group commit nobody waits on). Throws at once if it does not parse.
   */
  deferFact(fact: Fact): void {
    this.defer(this.#plain(fact));
  }

  /**
   * Defers a `model_observed` of the step. Deferred (not eager), an observation that
   * continues the last one — more text of the same kind, more arguments of the same
   * tool call (`mergeObservations`) — joins it, and the two become one fact when
   * anything else is written or flushed: a streamed answer rides as a few facts instead
   * of one per delta, and nothing but the deltas' boundaries is lost. Eager, every
   * observation is its own fact at once, for a tail of the log that follows the stream.
   */
  observe(stepId: string, observation: ModelObservation): void {
    if (this.#options.eager) {
      this.deferFact({ kind: 'model_observed', stepId, observation });
      return;
    }
    const held = this.#observed;
    if (held?.stepId === stepId) {
      const merged = mergeObservations(held.observation, observation);
      if (merged !== undefined) {
        held.observation = merged;
        return;
      }
    }
    this.#recordObserved();
    this.#observed = { stepId, observation };
  }

  /** The `EventSink` side of `deferFact`: a write of the run's tools that may ride along. */
  defer(write: EventWrite): void {
    this.#recordObserved();
    if (!this.#options.eager) {
      this.#riders.push(write);
      return;
    }
    const [commit] = this.#send([write]);
    // Checked by the next waited-for commit; until then a refusal is not unhandled.
    commit!.catch(() => undefined);
    this.#unwaited.push(commit!);
  }

  /** The log's clock: deadlines the log judges (approvals) are counted from it. */
  databaseNow(): Promise<number> {
    return this.#log.databaseNow();
  }

  /** The log's answer: an effect whose T1 just committed may start only under a live lease. */
  mayStartEffect(dispatch?: RuntimeEvent): boolean {
    return this.#log.mayStartEffect(dispatch);
  }

  /** Commits `fact` (with the deferred facts before it) and resolves once it is durable. */
  async write(fact: Fact): Promise<number> {
    return (await this.commit(this.#plain(fact))).sequence;
  }

  /**
   * Makes every deferred fact durable now (a no-op when there is none) — but a riding
   * opening with nothing else deferred stays deferred: a model request carries it itself
   * (see `pendingOpening`).
   */
  async flush(): Promise<void> {
    if (this.#options.eager) {
      await this.#settleUnwaited();
      return;
    }
    this.#recordObserved();
    if (this.#riders.length === 1 && this.#riders[0] === this.#opening) return;
    const riders = this.#riders.splice(0);
    if (riders.length > 0) await settleGroup(this.#send(riders));
  }

  /**
   * The invocation's opening while it rides along, not yet sent: the first model request
   * of a message run is built from the durable session prefix (its `source`) and this,
   * which then commits in the same transaction as the request's step.
   */
  pendingOpening(): RuntimeEvent | undefined {
    return this.#opening?.event;
  }

  /**
   * The riding opening's first prompt was built on the session's history up to `head`:
   * the commit that carries it is conditional on the session still ending there
   * (`commitTogether`'s `onHead`). If another writer appended meanwhile, the log refuses
   * the whole commit `session_moved` — the opening, the step built on the stale history
   * and the T1 with them, so no effect starts — and the run starts over on the new head.
   */
  openOn(head: SessionHead): void {
    if (this.#opening !== undefined) this.#openingHead = { highWater: head.highWater, digest: head.digest };
  }

  /** Eager: waits for the deferred commits in flight and fails if one failed. Else nothing. */
  async confirmEager(): Promise<void> {
    if (this.#options.eager) await this.#settleUnwaited();
  }

  /** The `EventSink` of the run's tools: `write` carries the deferred facts along. */
  async commit(write: EventWrite): Promise<CommitReceipt> {
    this.#recordObserved();
    if (this.#options.eager) {
      await this.#settleUnwaited();
      return settleGroup(this.#send([write]));
    }
    return settleGroup(this.#send([...this.#riders.splice(0), write]));
  }

  /**
   * The held observation becomes a deferred fact, before whatever is made or written
   * next (so event times follow the log's order).
   */
  #recordObserved(): void {
    const held = this.#observed;
    if (held === undefined) return;
    this.#observed = undefined;
    this.#riders.push(
      this.#plain({ kind: 'model_observed', stepId: held.stepId, observation: held.observation }),
    );
  }

  #plain(fact: Fact): EventWrite {
    this.#recordObserved();
    return EventWrite.plain(RuntimeEvent.create(this.#invocation, fact, this.#options.origin));
  }

  /** Queues `group` as one transaction; the projection follows each write's fate. */
  #send(group: readonly EventWrite[]): Promise<CommitReceipt>[] {
    const opening = this.#opening === undefined ? -1 : group.indexOf(this.#opening);
    // Only the opening's first commit is conditional: if it failed, what rides again is
    // the run's end, built on nothing (see below).
    const onHead = opening >= 0 ? this.#openingHead : undefined;
    this.#openingHead = undefined;
    const commits = this.#log.commitTogether(group, onHead === undefined ? {} : { onHead });
    if (opening >= 0) {
      const write = this.#opening!;
      this.#openingCommit = commits[opening];
      this.#opening = undefined;
      // A transaction that failed stored nothing: the opening rides again with the next
      // commit (the run's end), so a run whose first commit failed is still recorded as
      // failed when the log can take it. A refusal, or an outcome nobody knows, is final.
      commits[opening]!.catch((error: unknown) => {
        const failed = CommitError.isInstance(error) && error.outcome === 'rejected';
        if (!failed || AppendRefusedError.isInstance(error)) return;
        this.#opening = write;
        this.#riders.unshift(write);
      });
    }
    const projection = this.#options.projection;
    if (projection !== undefined) {
      commits.forEach((commit, index) => {
        commit.then(
          (receipt) => projection.advance(receipt.sequence, group[index]!, receipt.sessionDigest),
          // A refusal wrote nothing: the history in memory still stands, and the next
          // view checks it against the head (taking another writer's facts after it).
          (error: unknown) => {
            if (AppendRefusedError.isInstance(error)) projection.endLoan();
            else projection.invalidate();
          },
        );
      });
    }
    return commits;
  }

  async #settleUnwaited(): Promise<void> {
    const unwaited = this.#unwaited.splice(0);
    if (unwaited.length > 0) await settleGroup(unwaited);
  }
}

/**
 * Waits for a group and resolves with its last write's receipt. The group fails if any
 * of its writes failed: the last one's own error, else the first earlier write's.
 */
async function settleGroup(commits: readonly Promise<CommitReceipt>[]): Promise<CommitReceipt> {
  const results = await Promise.allSettled(commits);
  const last = results.at(-1)!;
  if (last.status === 'rejected') throw last.reason;
  const failed = results.find((result) => result.status === 'rejected');
  if (failed !== undefined) {
    throw CommitError.outcomeUnknown(
      'a fact committed together with this one was refused; the run stops rather than go on without it',
      { cause: failed.reason },
    );
  }
  return last.value;
}
