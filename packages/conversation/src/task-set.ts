/**
 * Owns background work so that nothing escapes: every task started here is awaited by
 * `drain`, and a task's rejection is observed (it is the starter's to report).
 */
export class TaskSet {
  readonly #tasks = new Set<Promise<unknown>>();

  /** Starts `work` and tracks it until it settles. */
  run<T>(work: () => Promise<T>): Promise<T> {
    const task = work();
    const tracked = task.then(
      () => undefined,
      () => undefined,
    );
    this.#tasks.add(tracked);
    void tracked.then(() => this.#tasks.delete(tracked));
    return task;
  }

  /** Number of tasks still running. */
  get size(): number {
    return this.#tasks.size;
  }

  /** Resolves once every task, including ones started meanwhile, has settled. */
  async drain(): Promise<void> {
    while (this.#tasks.size > 0) await Promise.all([...this.#tasks]);
  }
}
