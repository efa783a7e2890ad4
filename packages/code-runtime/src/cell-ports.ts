import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle } from 'quickjs-emscripten-core';
import type { CellLogEntry } from './cell-result.js';
import type { CellState } from './cell-state.js';

const LOG_LEVELS: ReadonlySet<string> = new Set(['log', 'info', 'warn', 'error']);

/**
 * The host functions a cell's prelude captures (`call`, `text`, `log`, `notify`,
 * `sleep`, `cancelSleep`) and the QuickJS promises they hand out. Every function
 * is inert once the cell is stopped, so nothing a terminated cell still does can
 * reach the host. Owns every handle it creates until {@link dispose}.
 */
export class CellPorts {
  readonly #context: QuickJSContext;
  readonly #state: CellState;
  readonly #calls = new Map<number, QuickJSDeferredPromise>();
  readonly #sleeps = new Map<number, { deferred: QuickJSDeferredPromise; timer: NodeJS.Timeout }>();

  constructor(context: QuickJSContext, state: CellState) {
    this.#context = context;
    this.#state = state;
  }

  /** A fresh object holding the host functions; the caller disposes it. */
  hostObject(): QuickJSHandle {
    const context = this.#context;
    const state = this.#state;
    const host = context.newObject();
    const define = (name: string, fn: (...args: QuickJSHandle[]) => QuickJSHandle | undefined) => {
      using handle = context.newFunction(name, fn);
      context.setProp(host, name, handle);
    };
    define('call', (nameHandle, inputHandle) => {
      if (state.stopped) return undefined;
      const name = context.getString(nameHandle!);
      if (!state.bridge.tools.includes(name)) throw new TypeError(`tools.${name} is not a tool of this cell`);
      const index = state.startToolCall(name, context.getString(inputHandle!));
      const deferred = context.newPromise();
      this.#calls.set(index, deferred);
      // The returned handle is freed by the caller after QuickJS copies it; the deferred keeps its resolvers.
      return deferred.handle;
    });
    define('text', (value) => {
      if (!state.stopped) state.addText(context.getString(value!));
      return undefined;
    });
    define('log', (level, message) => {
      if (state.stopped) return undefined;
      const name = context.getString(level!);
      if (LOG_LEVELS.has(name)) state.addLog(name as CellLogEntry['level'], context.getString(message!));
      return undefined;
    });
    define('notify', (message) => {
      if (!state.stopped) state.notify(context.getString(message!));
      return undefined;
    });
    define('sleep', (idHandle, msHandle) => {
      if (state.stopped) return undefined;
      const { maxTimers } = state.limits;
      if (this.#sleeps.size >= maxTimers) {
        throw state.exceed('maxTimers', `more than ${maxTimers} timers pending: clear or await some first`);
      }
      const id = context.getNumber(idHandle!);
      const ms = Math.min(context.getNumber(msHandle!), state.limits.deadlineMs);
      const deferred = context.newPromise();
      // The deadline bounds every timer: a longer one simply never fires before the cell ends.
      const timer = setTimeout(() => state.push({ type: 'timer', id }), ms);
      this.#sleeps.set(id, { deferred, timer });
      return deferred.handle;
    });
    define('cancelSleep', (idHandle) => {
      const id = context.getNumber(idHandle!);
      const sleep = this.#sleeps.get(id);
      if (sleep !== undefined) {
        clearTimeout(sleep.timer);
        sleep.deferred.dispose();
        this.#sleeps.delete(id);
      }
      return undefined;
    });
    return host;
  }

  /** Apply queued host events to the VM: settle the promises the cell awaits. */
  applyEvents(): void {
    const context = this.#context;
    for (const event of this.#state.takeEvents()) {
      if (event.type === 'timer') {
        const sleep = this.#sleeps.get(event.id);
        if (sleep === undefined) continue;
        this.#sleeps.delete(event.id);
        sleep.deferred.resolve();
        sleep.deferred.dispose();
        continue;
      }
      const deferred = this.#calls.get(event.index);
      if (deferred === undefined) continue;
      this.#calls.delete(event.index);
      if (event.type === 'settled') {
        if (event.json === undefined) deferred.resolve();
        else {
          using value = context.newString(event.json);
          deferred.resolve(value);
        }
      } else {
        using error = context.newError({ name: event.name, message: event.message });
        deferred.reject(error);
      }
      deferred.dispose();
    }
  }

  /** Free every promise still held and stop every timer. */
  dispose(): void {
    for (const deferred of this.#calls.values()) deferred.dispose();
    this.#calls.clear();
    for (const { deferred, timer } of this.#sleeps.values()) {
      clearTimeout(timer);
      deferred.dispose();
    }
    this.#sleeps.clear();
  }
}
