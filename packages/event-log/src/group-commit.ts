import type { PendingWrite } from './pending-write.js';

const immediate = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Lets timers and sockets run before the next batch. The store is synchronous
 * underneath: without a real yield a busy log would run batch after batch in
 * microtasks. One `setImmediate` is not enough when the batch ended in an I/O callback
 * (the WAL sync): it runs in the same loop turn, so the resolved writers' work and the
 * next batch would block the loop as one piece; the second hop lands after the timers
 * phase. It costs about 3 µs.
 */
async function nextLoopTurn(): Promise<void> {
  await immediate();
  await immediate();
}

/**
 * The queue in front of the store. Writes that arrive while a batch is committing wait
 * and go together in the next one: one transaction and one fsync for all of them, with
 * no timer adding latency to a lone writer.
 */
export class GroupCommit {
  readonly #flush: (batch: PendingWrite[]) => Promise<void>;
  readonly #maxBatch: number;
  #queue: PendingWrite[] = [];
  #running: Promise<void> | undefined;

  constructor(flush: (batch: PendingWrite[]) => Promise<void>, maxBatch: number) {
    this.#flush = flush;
    this.#maxBatch = maxBatch;
  }

  push(pending: PendingWrite): void {
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
        await this.#flush(batch);
        await nextLoopTurn();
      }
    } finally {
      this.#running = undefined;
    }
  }
}
