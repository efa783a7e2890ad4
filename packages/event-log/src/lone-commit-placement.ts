/**
 * The first lone commits of a log are cold — statements prepared, code not yet
 * compiled, the file's pages not yet cached — and cost 10–30× a warm one: they say
 * nothing about the disk, and are not counted.
 */
const WARM_UP_COMMITS = 4;
/** A moving average's weight for the newest lone commit. */
const WEIGHT = 0.1;
/**
 * Batches of one caller each, in a row, before lone writes come back to the loop after a
 * batch of several callers' writes.
 */
const SOLO_BATCHES = 8;

/**
 * Decides where a lone write commits: on the event loop while that is cheap, in the
 * writer thread once lone commits cost more than the budget on average (a slow or busy
 * disk), and back on the loop once they cost under half of it. Between the two lines
 * nothing changes, so a disk near the budget does not flip writes between connections.
 * No single commit moves the average by more than four budgets' weight (one stalled
 * fsync is not a slow disk), and the first few are not counted (see `WARM_UP_COMMITS`).
 *
 * A lone write also goes to the thread while the log has other writers: from a batch
 * of several callers' writes until `SOLO_BATCHES` batches of one caller each have
 * followed. A commit on the loop blocks it for its statements and fsync, which costs
 * nothing to a lone writer that waits for it anyway, but holds up every other writer's
 * work. Measured with 32 agent sessions on one SQLite file, three rounds each: 454–476
 * turns/s (p50 61–72 ms) this way, against 350–456 (p50 75–88 ms) with lone writes on
 * the loop (the peers benchmark itself measured the two alike); a lone writer keeps its
 * loop commits (155–198 turns/s sequentially, against 128–147 with every lone write in
 * the thread). A budget of `Infinity` keeps lone writes on the loop all the same.
 */
export class LoneCommitPlacement {
  readonly #budgetMs: number;
  #averageMs = 0;
  #seen = 0;
  #inThread: boolean;
  /** Batches of one caller in a row since the last of several callers' writes. */
  #solo = SOLO_BATCHES;

  constructor(budgetMs: number) {
    this.#budgetMs = budgetMs;
    this.#inThread = budgetMs <= 0;
  }

  /** Whether the next lone write commits in the writer thread. */
  get inThread(): boolean {
    return this.#inThread || this.#solo < SOLO_BATCHES;
  }

  /**
   * Counts a batch sent: one caller's write or group (`oneGroup`), or several callers'.
   * Under an infinite budget nothing moves lone writes, other writers included.
   */
  sent(oneGroup: boolean): void {
    if (this.#budgetMs === Number.POSITIVE_INFINITY) return;
    this.#solo = oneGroup ? Math.min(SOLO_BATCHES, this.#solo + 1) : 0;
  }

  /** Counts what a lone commit cost (its transaction and fsync, wherever it ran). */
  measure(elapsedMs: number): void {
    this.#seen += 1;
    if (this.#seen <= WARM_UP_COMMITS || !Number.isFinite(this.#budgetMs)) return;
    const sample = Math.min(elapsedMs, this.#budgetMs * 4);
    this.#averageMs += (sample - this.#averageMs) * WEIGHT;
    if (this.#averageMs >= this.#budgetMs) this.#inThread = true;
    else if (this.#averageMs < this.#budgetMs / 2) this.#inThread = false;
  }
}
