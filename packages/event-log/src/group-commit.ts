const immediate = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Loop turns to let pass after a batch before the next, so that timers and sockets run
 * meanwhile. A batch committed on the event loop (SQLite) is synchronous: a busy log, or
 * one writer appending fact after fact, would otherwise run batch after batch without
 * the loop turning; one `setImmediate` lands past the timers and poll phases (1). A
 * batch that ended in an I/O callback on the loop (a PostgreSQL response) would have the
 * next run in the same loop turn, so the resolved writers' work and the next batch would
 * block the loop as one piece; a second hop lands after the timers phase (2). A batch
 * the writer thread committed blocked nothing, and sending the next blocks nothing
 * either (0).
 */
export type LoopTurns = 0 | 1 | 2;

/** Where the queue's batches commit, and whether one may start before the last ends. */
export interface BatchSink<T> {
  /**
   * Commits a batch, and says how many loop turns to let pass before the next: at once
   * when it committed synchronously (on the event loop), else once it settles. Never
   * throws or rejects. `oneGroup`: the batch is a single caller's group (a lone write,
   * or one `pushAll`).
   */
  flush(batch: T[], oneGroup: boolean): LoopTurns | Promise<LoopTurns>;
  /**
   * Whether the next batch may go while others are in flight: they all go to one
   * writer that commits them in the order sent (the writer thread), and sending one
   * blocks nothing. With none in flight: whether such a writer is there.
   */
  overlaps(): boolean;
}

/** Batches in flight at most, when the sink lets them overlap. */
const MAX_IN_FLIGHT = 2;

/**
 * The queue in front of the store. Writes that arrive while a batch is committing wait
 * and go together in the next one: one transaction and one fsync for all of them, with
 * no timer adding latency to a lone writer. A group pushed with `pushAll` is never split
 * between batches (a group larger than `maxBatch` commits as one batch of its own), so
 * its writes reach the store in one transaction or not at all.
 *
 * When the sink commits off the event loop, a second batch goes while one commits: the
 * writers one batch resolves make their next writes while the writer commits the other,
 * instead of one waiting for the other. A burst of writes (many writers resolved at
 * once) goes as soon as `eager` of them are queued rather than at its end, so the two
 * halves of a busy log's writers take turns.
 */
export class GroupCommit<T> {
  readonly #sink: BatchSink<T>;
  readonly #maxBatch: number;
  readonly #eager: number;
  /** Groups in arrival order; a lone write is a group of one. */
  #queue: T[][] = [];
  #queued = 0;
  #inFlight = 0;
  #scheduled = false;
  /**
   * The loop turns the last batch asked for, while they have not passed: no batch goes
   * before. A write that comes after the loop has turned anyway goes at once.
   */
  #turns: Promise<void> | undefined;
  #waiting = false;
  #idle: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(sink: BatchSink<T>, maxBatch: number) {
    this.#sink = sink;
    this.#maxBatch = maxBatch;
    this.#eager = Math.max(16, Math.floor(maxBatch / 8));
  }

  push(pending: T): void {
    this.pushAll([pending]);
  }

  /** Queues `group` to commit in one batch, in its order. */
  pushAll(group: T[]): void {
    if (group.length === 0) return;
    this.#queue.push(group);
    this.#queued += group.length;
    const free = this.#turns === undefined && this.#inFlight === 0;
    if (free && this.#queued >= this.#eager && this.#sink.overlaps()) {
      const turns = this.#send();
      if (turns !== undefined) this.#afterBatch(turns);
      return;
    }
    // Writers that start in the same turn of the event loop join the next batch.
    if (!this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(() => {
        this.#scheduled = false;
        this.#pump();
      });
    }
  }

  /** Resolves once every write pushed so far has been committed or refused. */
  idle(): Promise<void> {
    if (this.#quiet()) return Promise.resolve();
    if (this.#idle === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => {
        resolve = done;
      });
      this.#idle = { promise, resolve };
    }
    return this.#idle.promise;
  }

  #pump(): void {
    while (this.#queue.length > 0) {
      if (this.#turns !== undefined) {
        this.#waitForTurns(this.#turns);
        return;
      }
      if (this.#inFlight > 0 && !(this.#inFlight < MAX_IN_FLIGHT && this.#sink.overlaps())) return;
      const turns = this.#send();
      if (turns !== undefined) this.#afterBatch(turns);
    }
    if (this.#idle !== undefined && this.#quiet()) {
      this.#idle.resolve();
      this.#idle = undefined;
    }
  }

  /** Sends the next batch: its loop turns if it committed at once, else undefined. */
  #send(): LoopTurns | undefined {
    const { batch, groups } = this.#nextBatch();
    this.#inFlight += 1;
    let turns: LoopTurns | Promise<LoopTurns>;
    try {
      turns = this.#sink.flush(batch, groups === 1);
    } catch {
      // Only a hook throws here (a test's): the queue goes on.
      turns = 2;
    }
    if (!(turns instanceof Promise)) {
      this.#inFlight -= 1;
      return turns;
    }
    turns.then(
      (settled) => this.#settled(settled),
      () => this.#settled(2),
    );
    return undefined;
  }

  #settled(turns: LoopTurns): void {
    this.#inFlight -= 1;
    this.#afterBatch(turns);
    this.#pump();
  }

  /** Starts the loop turns a batch asks for (one wait at a time: the first stands). */
  #afterBatch(turns: LoopTurns): void {
    if (turns === 0 || this.#turns !== undefined) return;
    this.#turns = (async () => {
      for (let turn = 0; turn < turns; turn += 1) await immediate();
      this.#turns = undefined;
    })();
  }

  #waitForTurns(turns: Promise<void>): void {
    if (this.#waiting) return;
    this.#waiting = true;
    void turns.then(() => {
      this.#waiting = false;
      this.#pump();
    });
  }

  #quiet(): boolean {
    return this.#queue.length === 0 && this.#inFlight === 0 && !this.#scheduled && !this.#waiting;
  }

  /** Whole groups, up to `maxBatch` writes (at least one group, however large). */
  #nextBatch(): { batch: T[]; groups: number } {
    const batch: T[] = [...this.#queue.shift()!];
    let groups = 1;
    while (this.#queue.length > 0 && batch.length + this.#queue[0]!.length <= this.#maxBatch) {
      batch.push(...this.#queue.shift()!);
      groups += 1;
    }
    this.#queued -= batch.length;
    return { batch, groups };
  }
}
