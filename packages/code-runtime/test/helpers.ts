import type { CellBridge, CellHostCall } from '../src/index.js';

/** A bridge whose tools are plain async functions; records every call it receives. */
export class RecordingBridge implements CellBridge {
  readonly tools: readonly string[];
  readonly calls: CellHostCall[] = [];
  readonly #handlers: Readonly<Record<string, (call: CellHostCall) => Promise<unknown>>>;

  constructor(handlers: Record<string, (call: CellHostCall) => Promise<unknown>>) {
    this.#handlers = handlers;
    this.tools = Object.keys(handlers);
  }

  call(call: CellHostCall): Promise<unknown> {
    this.calls.push(call);
    return this.#handlers[call.name]!(call);
  }
}

/** Resolves after `ms`, or at once when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
