import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten-core';
import type { CellBridge } from './cell-bridge.js';
import type { CellLimits } from './cell-limits.js';
import { CellPorts } from './cell-ports.js';
import { CELL_PRELUDE } from './cell-prelude.js';
import type { CellError, CellResult } from './cell-result.js';
import { CellState, type CellStop } from './cell-state.js';
import { CELL_FILE_NAME, classifyQuickJSError, mapQuickJSError } from './map-quickjs-error.js';
import type { QuickJSInstance } from './quickjs-module-pool.js';

/** How the JavaScript of a cell ended, when nothing stopped it from outside. */
type JsOutcome = { readonly kind: 'completed' } | { readonly kind: 'failed'; readonly error: CellError };

/** A settled cell and whether its QuickJS instance may serve another cell. */
export interface CellRunOutcome {
  readonly result: CellResult;
  readonly reusable: boolean;
  /** True when QuickJS itself failed (a host-side exception or a runtime that would not free). */
  readonly broken: boolean;
}

/**
 * One cell from first instruction to settlement. JavaScript runs only inside
 * `#pump` (evaluation, then `executePendingJobs` after host events); host
 * events are queued by {@link CellPorts} and applied there, so once the cell is
 * stopped nothing more reaches QuickJS and no more JavaScript runs.
 */
export class CellRun {
  readonly #instance: QuickJSInstance;
  readonly #limits: CellLimits;
  readonly #state: CellState;
  readonly #signal: AbortSignal | undefined;
  #broken = false;

  constructor(
    instance: QuickJSInstance,
    limits: CellLimits,
    bridge: CellBridge,
    signal: AbortSignal | undefined,
  ) {
    this.#instance = instance;
    this.#limits = limits;
    this.#signal = signal;
    this.#state = new CellState(limits, bridge);
  }

  async run(source: string): Promise<CellRunOutcome> {
    const state = this.#state;
    const runtime = this.#instance.module.newRuntime();
    runtime.setMemoryLimit(this.#limits.memoryBytes);
    runtime.setMaxStackSize(this.#limits.stackBytes);
    runtime.setInterruptHandler(() => state.stopped || state.pastDeadline());
    const context = runtime.newContext();
    const ports = new CellPorts(context, state);
    const onAbort = () => state.stop({ kind: 'cancelled' });
    this.#signal?.addEventListener('abort', onAbort, { once: true });
    const deadline = setTimeout(() => state.stop({ kind: 'timed_out' }), this.#limits.deadlineMs);
    let cellPromise: QuickJSHandle | undefined;
    let outcome: JsOutcome | undefined;
    try {
      cellPromise = this.#start(context, ports, source);
      if (cellPromise !== undefined) outcome = await this.#pump(runtime, context, ports, cellPromise);
      else if (this.#lastError !== undefined) outcome = { kind: 'failed', error: this.#lastError };
    } catch (error) {
      outcome = this.#hostFailure(error);
    }
    // The cell's JavaScript is over; host calls it started are still owed a settlement.
    await state.drainHostCalls();
    clearTimeout(deadline);
    this.#signal?.removeEventListener('abort', onAbort);
    this.#teardown(runtime, context, ports, cellPromise);
    const result = state.result(outcome ?? { kind: 'completed' });
    const reusable = !this.#broken && result.kind !== 'out_of_memory' && result.kind !== 'timed_out';
    return { result, reusable, broken: this.#broken };
  }

  /** Evaluate the prelude and the cell; returns the cell's promise, or undefined once the cell ended. */
  #start(context: QuickJSContext, ports: CellPorts, source: string): QuickJSHandle | undefined {
    const prelude = context.evalCode(CELL_PRELUDE, 'prelude.js', { type: 'global', strict: true });
    const preludeFn = context.unwrapResult(prelude);
    try {
      using host = ports.hostObject();
      using names = context.newArray();
      this.#state.bridge.tools.forEach((name, index) => {
        using handle = context.newString(name);
        context.setProp(names, index, handle);
      });
      context.unwrapResult(context.callFunction(preludeFn, context.undefined, host, names)).dispose();
    } finally {
      preludeFn.dispose();
    }
    // Same first line as the source, so QuickJS line numbers are the cell's own.
    const wrapped = `(async function () {${source}\n})()`;
    const evaluated = context.evalCode(wrapped, CELL_FILE_NAME, { type: 'global' });
    if (evaluated.error !== undefined) {
      const dumped = dumpAndDispose(context, evaluated.error);
      this.#recordJsError(dumped);
      return undefined;
    }
    return evaluated.value;
  }

  #lastError: CellError | undefined;

  #recordJsError(dumped: unknown): void {
    const state = this.#state;
    switch (classifyQuickJSError(dumped)) {
      case 'interrupted':
        if (!state.stopped) state.stop({ kind: 'timed_out' });
        return;
      case 'out_of_memory':
        state.stop({ kind: 'out_of_memory' });
        return;
      case 'stack_overflow':
        state.stop(stackStop());
        return;
      case 'error':
        this.#lastError = mapQuickJSError(dumped);
        return;
    }
  }

  async #pump(
    runtime: QuickJSRuntime,
    context: QuickJSContext,
    ports: CellPorts,
    cellPromise: QuickJSHandle,
  ): Promise<JsOutcome | undefined> {
    const state = this.#state;
    for (;;) {
      if (state.stopped) return undefined;
      const jobs = runtime.executePendingJobs();
      if (jobs.error !== undefined) {
        // quickjs-ng reports an interrupt (or out of memory) inside a job only here.
        const dumped = dumpAndDispose(context, jobs.error);
        this.#recordJsError(dumped);
        if (this.#lastError !== undefined) return { kind: 'failed', error: this.#lastError };
      }
      if (state.stopped) return undefined;
      const promiseState = context.getPromiseState(cellPromise);
      if (promiseState.type === 'fulfilled') {
        promiseState.value.dispose();
        return { kind: 'completed' };
      }
      if (promiseState.type === 'rejected') {
        const dumped = dumpAndDispose(context, promiseState.error);
        this.#recordJsError(dumped);
        if (state.stopped) return undefined;
        return { kind: 'failed', error: this.#lastError ?? mapQuickJSError(dumped) };
      }
      await state.nextEvent();
      if (state.stopped) return undefined;
      ports.applyEvents();
    }
  }

  /** QuickJS itself threw on the host: its module can no longer be trusted. */
  #hostFailure(error: unknown): JsOutcome | undefined {
    this.#broken = true;
    const state = this.#state;
    if (error instanceof RangeError && /call stack/i.test(error.message)) {
      state.stop(stackStop());
      return undefined;
    }
    if (this.#instance.memory.buffer.byteLength >= this.#instance.memoryBytes - 64 * 1024) {
      state.stop({ kind: 'out_of_memory' });
      return undefined;
    }
    const message = error instanceof Error ? error.message : String(error);
    return { kind: 'failed', error: { name: 'InternalError', message: `QuickJS failed: ${message}` } };
  }

  #teardown(
    runtime: QuickJSRuntime,
    context: QuickJSContext,
    ports: CellPorts,
    cellPromise: QuickJSHandle | undefined,
  ): void {
    // Every handle must be gone before the runtime is freed, or QuickJS aborts the module.
    try {
      ports.dispose();
      cellPromise?.dispose();
      context.dispose();
      runtime.dispose();
    } catch {
      this.#broken = true;
    }
  }
}

function dumpAndDispose(context: QuickJSContext, handle: QuickJSHandle): unknown {
  try {
    return context.dump(handle);
  } finally {
    handle.dispose();
  }
}

function stackStop(): CellStop {
  return {
    kind: 'limit_exceeded',
    limit: 'stackBytes',
    message: 'maximum call stack size exceeded: reduce recursion depth or raise stackBytes',
  };
}
