import type { CellBridge } from './cell-bridge.js';
import { CellLimits } from './cell-limits.js';
import { CellLimitsError } from './cell-limits-error.js';
import type { CellResult, CellResultBase } from './cell-result.js';
import { CellRun } from './cell-run.js';
import { ExecutorClosedError } from './executor-closed-error.js';
import { QuickJSModulePool } from './quickjs-module-pool.js';

/** Options of {@link CodeExecutor.run}. */
export interface CellRunOptions {
  /** What the cell can reach of the host; without it, `tools` is empty. */
  readonly bridge?: CellBridge;
  /** Cancels the cell: before it starts (`phase: 'before'`) or while it runs (`'during'`). */
  readonly signal?: AbortSignal;
}

/** Counters of a {@link CodeExecutor}, for monitoring and tests. */
export interface CodeExecutorStats {
  /** Cells that reached QuickJS. */
  readonly cellsRun: number;
  /** Cells running now. */
  readonly cellsRunning: number;
  /** QuickJS instances created (each with its own bounded memory). */
  readonly instancesCreated: number;
  /** Instances dropped instead of reused (after out of memory, a timeout, or a full idle pool). */
  readonly instancesDiscarded: number;
  /** Instances waiting for the next cell. */
  readonly instancesIdle: number;
  /** Cells after which QuickJS itself failed (a host-side exception or a runtime that would not free). */
  readonly instancesBroken: number;
}

const NO_HOST: CellBridge = {
  tools: [],
  call: async () => undefined,
};

/**
 * Runs model-written JavaScript in QuickJS cells under hard {@link CellLimits}.
 * Each cell is the body of an async function with `tools.<name>(input)`,
 * `text(value)`, `notify(message)`, `setTimeout`/`clearTimeout` and `console`,
 * and nothing else of the host. Cells may run concurrently; each gets its own
 * QuickJS runtime in its own WebAssembly memory, and the executor stays usable
 * after any cell, however it ended.
 *
 * @example
 * ```ts
 * const executor = new CodeExecutor(CellLimits.from({ deadlineMs: 2_000 }));
 * const result = await executor.run("const r = await tools.add({ a: 1, b: 2 }); text(r.sum)", {
 *   bridge: {
 *     tools: ['add'],
 *     async call({ input }) {
 *       const { a, b } = input as { a: number; b: number };
 *       return { sum: a + b };
 *     },
 *   },
 * });
 * if (result.kind === 'completed') console.log(result.output); // "3"
 * await executor.close();
 * ```
 */
export class CodeExecutor implements AsyncDisposable {
  /** The limits every cell of this executor runs under. */
  readonly limits: CellLimits;
  readonly #pool = new QuickJSModulePool();
  readonly #running = new Set<Promise<CellResult>>();
  #cellsRun = 0;
  #broken = 0;
  #closed = false;

  constructor(limits: CellLimits = CellLimits.default()) {
    if (!(limits instanceof CellLimits)) {
      throw new CellLimitsError('limits', 'pass a CellLimits, e.g. CellLimits.from({ deadlineMs: 5000 })');
    }
    this.limits = limits;
  }

  get stats(): CodeExecutorStats {
    const pool = this.#pool.counts;
    return {
      cellsRun: this.#cellsRun,
      cellsRunning: this.#running.size,
      instancesCreated: pool.created,
      instancesDiscarded: pool.discarded,
      instancesIdle: pool.idle,
      instancesBroken: this.#broken,
    };
  }

  /**
   * Run `source` as the body of an async function and settle once its
   * JavaScript ended and every host call it started has settled. Never rejects
   * for anything the cell does: every ending is a {@link CellResult}.
   * @throws {ExecutorClosedError} after {@link close}.
   */
  run(source: string, options: CellRunOptions = {}): Promise<CellResult> {
    if (this.#closed) return Promise.reject(new ExecutorClosedError());
    const task = this.#run(source, options);
    this.#running.add(task);
    void task.finally(() => this.#running.delete(task)).catch(() => undefined);
    return task;
  }

  /** Wait for the running cells, then release every idle QuickJS instance. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#running]);
    this.#pool.clear();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #run(source: string, options: CellRunOptions): Promise<CellResult> {
    const { signal } = options;
    if (signal?.aborted) return { ...emptyBase(), kind: 'cancelled', phase: 'before' };
    const sourceBytes = Buffer.byteLength(source, 'utf8');
    if (sourceBytes > this.limits.maxSourceBytes) {
      return {
        ...emptyBase(),
        kind: 'limit_exceeded',
        limit: 'maxSourceBytes',
        message: `the source is ${sourceBytes} bytes, over the limit of ${this.limits.maxSourceBytes}`,
      };
    }
    const instance = await this.#pool.acquire(this.limits.memoryBytes);
    if (signal?.aborted) {
      this.#pool.release(instance, true);
      return { ...emptyBase(), kind: 'cancelled', phase: 'before' };
    }
    this.#cellsRun += 1;
    const cell = new CellRun(instance, this.limits, options.bridge ?? NO_HOST, signal);
    const outcome = await cell.run(source);
    if (outcome.broken) this.#broken += 1;
    this.#pool.release(instance, outcome.reusable);
    return outcome.result;
  }
}

function emptyBase(): CellResultBase {
  return { output: '', logs: [], notifications: [], hostCalls: { started: 0, settled: 0 }, durationMs: 0 };
}
