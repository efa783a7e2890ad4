/**
 * The first lone commits of a log are cold — statements prepared, code not yet
 * compiled, the file's pages not yet cached — and cost 10–30× a warm one: they say
 * nothing about the disk, and are not counted.
 */
const WARM_UP_COMMITS = 4;
/** A moving average's weight for the newest lone commit. */
const WEIGHT = 0.1;

/**
 * Decides where a lone write commits: on the event loop while that is cheap, in the
 * writer thread once lone commits cost more than the budget on average (a slow or busy
 * disk), and back on the loop once they cost under half of it. Between the two lines
 * nothing changes, so a disk near the budget does not flip writes between connections.
 * No single commit moves the average by more than four budgets' weight (one stalled
 * fsync is not a slow disk), and the first few are not counted (see `WARM_UP_COMMITS`).
 */
export class LoneCommitPlacement {
  readonly #budgetMs: number;
  #averageMs = 0;
  #seen = 0;
  #inThread: boolean;

  constructor(budgetMs: number) {
    this.#budgetMs = budgetMs;
    this.#inThread = budgetMs <= 0;
  }

  /** Whether the next lone write commits in the writer thread. */
  get inThread(): boolean {
    return this.#inThread;
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
