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
 * no timer adding latency to a lone writer.
 */
export class GroupCommit<T> {
  /** Commits a batch; resolves true when it ended in an I/O callback. */
  readonly #flush: (batch: T[]) => Promise<boolean>;
  readonly #maxBatch: number;
  #queue: T[] = [];
  #running: Promise<void> | undefined;

  constructor(flush: (batch: T[]) => Promise<boolean>, maxBatch: number) {
    this.#flush = flush;
    this.#maxBatch = maxBatch;
  }

  push(pending: T): void {
    this.#queue.push(pending);
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
        const batch = this.#queue.splice(0, this.#maxBatch);
        await nextLoopTurn(await this.#flush(batch));
      }
    } finally {
      this.#running = undefined;
    }
  }
}
