const immediate = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Lets timers and sockets run before the next batch. A batch committed on the event
 * loop is synchronous underneath: without a real yield a busy log would run batch after
 * batch in microtasks. After such a batch one `setImmediate` lands past the timers and
 * poll phases. After a batch that ended in an I/O callback (the writer thread's reply, a
 * PostgreSQL response) it would run in the same loop turn, so the resolved writers' work
 * and the next batch would block the loop as one piece; a second hop lands after the
 * timers phase. Each hop costs a lone writer about 6 µs.
 */
async function nextLoopTurn(endedInIo: boolean): Promise<void> {
  await immediate();
  if (endedInIo) await immediate();
}

/**
 * The queue in front of the store. Writes that arrive while a batch is committing wait
 * and go together in the next one: one transaction and one fsync for all of them, with
 * no timer adding latency to a lone writer. A group pushed with `pushAll` is never split
 * between batches (a group larger than `maxBatch` commits as one batch of its own), so
 * its writes reach the store in one transaction or not at all.
 */
export class GroupCommit<T> {
  /**
   * Commits a batch; resolves true when it ended in an I/O callback. `oneGroup`: the
   * batch is a single caller's group (a lone write, or one `pushAll`).
   */
  readonly #flush: (batch: T[], oneGroup: boolean) => Promise<boolean>;
  readonly #maxBatch: number;
  /** Groups in arrival order; a lone write is a group of one. */
  #queue: T[][] = [];
  #running: Promise<void> | undefined;

  constructor(flush: (batch: T[], oneGroup: boolean) => Promise<boolean>, maxBatch: number) {
    this.#flush = flush;
    this.#maxBatch = maxBatch;
  }

  push(pending: T): void {
    this.pushAll([pending]);
  }

  /** Queues `group` to commit in one batch, in its order. */
  pushAll(group: T[]): void {
    if (group.length === 0) return;
    this.#queue.push(group);
    this.#running ??= this.#drain();
  }

  /** Resolves once every write pushed so far has been committed or refused. */
  async idle(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }

  async #drain(): Promise<void> {
    // Writers that start in the same turn of the event loop join the first batch.
    await null;
    try {
      while (this.#queue.length > 0) {
        const { batch, groups } = this.#nextBatch();
        await nextLoopTurn(await this.#flush(batch, groups === 1));
      }
    } finally {
      this.#running = undefined;
    }
  }

  /** Whole groups, up to `maxBatch` writes (at least one group, however large). */
  #nextBatch(): { batch: T[]; groups: number } {
    const batch: T[] = [...this.#queue.shift()!];
    let groups = 1;
    while (this.#queue.length > 0 && batch.length + this.#queue[0]!.length <= this.#maxBatch) {
      batch.push(...this.#queue.shift()!);
      groups += 1;
    }
    return { batch, groups };
  }
}
