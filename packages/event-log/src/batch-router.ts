import { CommittedHeads } from './committed-heads.js';
import type { BatchSink, LoopTurns } from './group-commit.js';
import { inlineWriter } from './inline-writer.js';
import type { LogStats } from './log-stats.js';
import { LoneCommitPlacement } from './lone-commit-placement.js';
import type { OpenDatabase } from './open-database.js';
import { packedMap } from './packed-map.js';
import { type PendingWrite, settleBatch } from './settle-batch.js';
import type { BatchResult, BatchWriter, CommitHooks } from './staged-write.js';
import { ThreadWriter } from './writer-thread-client.js';

/** The largest group of one caller that commits like a lone write (see `#writerFor`). */
const LONE_GROUP_MAX = 16;

/** How a log's batches are placed and counted. */
export type BatchRouterOptions = {
  readonly writerThread?: boolean;
  readonly loneCommitBudgetMs?: number;
  readonly hooks?: CommitHooks;
};

/**
 * Where the group commit's batches go — the event loop's connection or the writer
 * thread — and what they committed (`stats`). Each batch's writers are told its outcome
 * once it has settled, counted first.
 */
export class BatchRouter implements BatchSink<PendingWrite> {
  readonly #hooks: CommitHooks;
  readonly #inline: BatchWriter;
  readonly #startThread: (() => ThreadWriter) | undefined;
  #thread: ThreadWriter | undefined;
  /** Batches sent to the writer thread and not yet settled: the next goes there too. */
  #inThread = 0;
  /** Where lone writes commit, by what they have cost. */
  readonly #lone: LoneCommitPlacement;
  #commits = 0;
  #facts = 0;
  #commitMs = 0;
  #oneTrip = 0;
  #staleHeads = 0;
  /** Where this log's last commit to each session left it (see `EventLog.committedHead`). */
  readonly heads = new CommittedHeads();

  constructor(store: OpenDatabase, options: BatchRouterOptions) {
    this.#hooks = options.hooks ?? {};
    this.#lone = new LoneCommitPlacement(options.loneCommitBudgetMs ?? 4);
    const beforeCommit = this.#hooks.beforeCommit;
    this.#inline = inlineWriter(store, beforeCommit);
    // The thread starts with the first batch of several writes: a log only read, or
    // written one fact at a time, never starts one.
    const walFile = store.walFile;
    if (walFile !== undefined && options.writerThread !== false) {
      this.#startThread = () => new ThreadWriter(walFile, beforeCommit);
    }
  }

  /**
   * Only the thread commits batches in the order sent without blocking the loop (a
   * batch on the loop has committed before the next is formed): once it is ready, or
   * while a batch is in it.
   */
  overlaps(): boolean {
    return this.#threadTakesBatches();
  }

  /** Whether the thread takes batches now: it has opened the log, or a batch is in it. */
  #threadTakesBatches(): boolean {
    return this.#inThread > 0 || this.#thread?.ready === true;
  }

  /**
   * Starts the writer thread and opens the log there, resolving once it has (at once
   * without a thread: PostgreSQL, a log in memory, `writerThread: false`). Rejects if
   * the thread cannot open the log; batches then keep committing on the loop.
   */
  async startThread(): Promise<void> {
    if (this.#startThread === undefined) return;
    this.#thread ??= this.#startThread();
    await this.#thread.start();
  }

  flush(batch: PendingWrite[], oneGroup: boolean): LoopTurns | Promise<LoopTurns> {
    const lone = batch.length === 1 || (oneGroup && batch.length <= LONE_GROUP_MAX);
    const writer = this.#writerFor(lone);
    this.#lone.sent(oneGroup);
    // Optional call: without the hook, no id list is built.
    this.#hooks.batchStarted?.({
      size: batch.length,
      eventIds: batch.map((pending) => pending.staged.event.id),
      committer: writer.committer,
    });
    const written = writer.write(packedMap(batch, (pending) => pending.staged));
    // On the event loop the batch has committed already: its writers are told at once.
    if (!(written instanceof Promise)) return this.#settle(batch, written, lone, 1);
    const offLoop = writer.committer === 'writer_thread';
    if (offLoop) this.#inThread += 1;
    return written.then((result) => {
      if (offLoop) this.#inThread -= 1;
      return this.#settle(batch, result, lone, offLoop ? 0 : 2);
    });
  }

  /** What the log has committed since it was opened (see `LogStats`). */
  stats(): LogStats {
    return {
      commits: this.#commits,
      facts: this.#facts,
      commitMs: this.#commitMs,
      oneTrip: this.#oneTrip,
      staleHeads: this.#staleHeads,
    };
  }

  /** Stops the writer thread's connection, if one was started. */
  async close(): Promise<void> {
    await this.#thread?.close();
  }

  /**
   * Where a batch commits. Several writes go to the writer thread, where their
   * statements and fsync block nothing — once it has started: until then they commit on
   * the loop rather than wait for it. A lone write commits on the event loop while
   * that is cheap: the thread would add two wake-ups to its latency (measured: about
   * 0.3 ms, as much as its fsync on a quiet disk). Once lone commits cost more than the
   * budget on average (a slow or busy disk), they go to the thread too, and come back
   * under half the budget (`LoneCommitPlacement`).
   * A small group of one caller (`commitTogether`, up to `LONE_GROUP_MAX` writes) waits
   * like a lone write and is treated as one: the thread's wake-ups would double its
   * latency (measured: 1.2 ms against 0.7 ms for a group of five on a quiet disk).
   */
  #writerFor(lone: boolean): BatchWriter {
    // While a batch is in the thread, the next goes after it there: in the order sent.
    const inline = lone && !this.#lone.inThread && this.#inThread === 0;
    if (this.#startThread === undefined || inline) return this.#inline;
    this.#thread ??= this.#startThread();
    if (this.#threadTakesBatches()) return this.#thread;
    // No batch waits for the thread to start: until it has opened the log, batches
    // commit on the loop (all of them, if it cannot open the log).
    this.#thread.start().catch(() => undefined);
    return this.#inline;
  }

  #settle(batch: PendingWrite[], result: BatchResult, lone: boolean, turns: LoopTurns): LoopTurns {
    if (result.kind === 'committed') {
      if (lone) this.#lone.measure(result.elapsedMs);
      let stored = 0;
      for (const outcome of result.outcomes) if ('stored' in outcome) stored += 1;
      // Counted before any caller is told, so a caller that awaited its write sees it.
      if (stored > 0) {
        this.#commits += 1;
        this.#commitMs += result.elapsedMs;
        if (result.oneTrip) this.#oneTrip += 1;
      }
      if (result.staleHead) this.#staleHeads += 1;
      this.#facts += stored;
    }
    // Recorded before any caller is told, like the counts.
    this.heads.record(batch, result);
    settleBatch(batch, result, this.#hooks);
    return turns;
  }
}
