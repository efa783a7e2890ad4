import type { CellBridge } from './cell-bridge.js';
import type { CellLimitName, CellLimits } from './cell-limits.js';
import type { CellError, CellFatalCall, CellLogEntry, CellResult, CellResultBase } from './cell-result.js';
import { CellTerminatedError } from './cell-terminated-error.js';
import { FatalHostError } from './fatal-host-error.js';

/** Why a cell was stopped from outside its JavaScript. */
export type CellStop =
  | { readonly kind: 'timed_out' }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'out_of_memory' }
  | { readonly kind: 'fatal'; readonly call: CellFatalCall; readonly cause: unknown }
  | { readonly kind: 'limit_exceeded'; readonly limit: CellLimitName; readonly message: string };

/** A host-side event waiting to be applied to the VM by the pump. */
export type CellEvent =
  | { readonly type: 'settled'; readonly index: number; readonly json: string | undefined }
  | { readonly type: 'rejected'; readonly index: number; readonly name: string; readonly message: string }
  | { readonly type: 'timer'; readonly id: number };

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * The host-side books of one cell: limits, output, host calls in flight, the
 * queue of events for the pump, and the first reason it was stopped. It never
 * touches QuickJS, so it stays valid after the VM is gone.
 */
export class CellState {
  readonly bridge: CellBridge;
  readonly #limits: CellLimits;
  readonly #startedAt = performance.now();
  readonly #deadlineAt: number;
  readonly #controller = new AbortController();
  readonly #text: string[] = [];
  readonly #logs: CellLogEntry[] = [];
  readonly #notifications: string[] = [];
  readonly #tasks = new Set<Promise<void>>();
  readonly #events: CellEvent[] = [];
  #outputBytes = 0;
  #started = 0;
  #settled = 0;
  #toolsInFlight = 0;
  #notifyChain: Promise<void> = Promise.resolve();
  #stop: CellStop | undefined;
  #wake: (() => void) | undefined;

  constructor(limits: CellLimits, bridge: CellBridge) {
    this.#limits = limits;
    this.bridge = bridge;
    this.#deadlineAt = this.#startedAt + limits.deadlineMs;
  }

  get stopped(): boolean {
    return this.#stop !== undefined;
  }

  get limits(): CellLimits {
    return this.#limits;
  }

  pastDeadline(): boolean {
    return performance.now() >= this.#deadlineAt;
  }

  /** Stop the cell; the first reason wins. Host calls in flight see their signal abort. */
  stop(stop: CellStop): void {
    if (this.#stop !== undefined) return;
    this.#stop = stop;
    this.#controller.abort(new CellTerminatedError(stop.kind));
    this.#wakeUp();
  }

  /** Stop for a limit; returns an error the host function throws so the current JS step unwinds. */
  exceed(limit: CellLimitName, message: string): Error {
    this.stop({ kind: 'limit_exceeded', limit, message });
    return new RangeError(message);
  }

  /** Resolves once an event is queued or the cell is stopped. */
  nextEvent(): Promise<void> {
    if (this.#events.length > 0 || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      this.#wake = resolve;
    });
  }

  takeEvents(): CellEvent[] {
    return this.#events.splice(0);
  }

  /** Queue an event for the pump (a timer fired, or a host call settled). */
  push(event: CellEvent): void {
    this.#events.push(event);
    this.#wakeUp();
  }

  addText(text: string): void {
    if (this.#reserveOutput(text)) this.#text.push(text);
  }

  addLog(level: CellLogEntry['level'], message: string): void {
    if (this.#reserveOutput(message)) this.#logs.push({ level, message });
  }

  /** Start a tool call on the bridge; returns its index, or throws (after stopping) on a limit. */
  startToolCall(name: string, json: string): number {
    const limits = this.#limits;
    this.#checkCallBudget(json);
    if (this.#toolsInFlight >= limits.maxHostCallsInFlight) {
      throw this.exceed(
        'maxHostCallsInFlight',
        `more than ${limits.maxHostCallsInFlight} tool calls in flight: await some before starting more`,
      );
    }
    const index = this.#started++;
    this.#toolsInFlight += 1;
    const input: unknown = JSON.parse(json);
    const task = (async () => {
      try {
        const output = await this.bridge.call({ name, input, index, signal: this.#controller.signal });
        const encoded = output === undefined ? undefined : JSON.stringify(output);
        if (encoded !== undefined && utf8Bytes(encoded) > limits.maxCallOutputBytes) {
          this.exceed(
            'maxCallOutputBytes',
            `the result of tools.${name} is over ${limits.maxCallOutputBytes} bytes of JSON`,
          );
          return;
        }
        this.push({ type: 'settled', index, json: encoded });
      } catch (error) {
        if (FatalHostError.isInstance(error)) {
          this.stop({ kind: 'fatal', call: { kind: 'tool', name, index }, cause: error });
          return;
        }
        const message = error instanceof Error ? error.message : String(error);
        this.push({ type: 'rejected', index, name: 'HostError', message });
      } finally {
        this.#toolsInFlight -= 1;
        this.#settled += 1;
      }
    })();
    this.#own(task);
    return index;
  }

  /** Queue one notification; they reach the bridge one at a time, in order. */
  notify(message: string): void {
    this.#checkCallBudget(JSON.stringify(message));
    const index = this.#started++;
    this.#notifications.push(message);
    const deliver = async () => {
      try {
        // A terminated cell's progress is moot; its message stays in the result.
        if (this.stopped) return;
        await this.bridge.notify?.({ message, index, signal: this.#controller.signal });
      } catch (error) {
        // Progress is best effort, unless the host says losing it is fatal.
        if (FatalHostError.isInstance(error)) {
          this.stop({ kind: 'fatal', call: { kind: 'notify', name: 'notify', index }, cause: error });
        }
      } finally {
        this.#settled += 1;
      }
    };
    this.#notifyChain = this.#notifyChain.then(deliver);
    this.#own(this.#notifyChain);
  }

  /** Await every host call the cell started; the caller keeps books on them. */
  async drainHostCalls(): Promise<void> {
    while (this.#tasks.size > 0) await Promise.all(this.#tasks);
  }

  result(outcome: { kind: 'completed' } | { kind: 'failed'; error: CellError }): CellResult {
    const base: CellResultBase = {
      output: this.#text.join('\n'),
      logs: [...this.#logs],
      notifications: [...this.#notifications],
      hostCalls: { started: this.#started, settled: this.#settled },
      durationMs: performance.now() - this.#startedAt,
    };
    const stop = this.#stop;
    if (stop === undefined) return { ...base, ...outcome };
    if (stop.kind === 'cancelled') return { ...base, kind: 'cancelled', phase: 'during' };
    return { ...base, ...stop };
  }

  #checkCallBudget(json: string): void {
    const limits = this.#limits;
    if (this.#started >= limits.maxHostCalls) {
      throw this.exceed('maxHostCalls', `more than ${limits.maxHostCalls} host calls (tools and notify)`);
    }
    if (utf8Bytes(json) > limits.maxCallInputBytes) {
      throw this.exceed(
        'maxCallInputBytes',
        `a host call input is over ${limits.maxCallInputBytes} bytes of JSON`,
      );
    }
  }

  #reserveOutput(text: string): boolean {
    const bytes = utf8Bytes(text) + (this.#outputBytes > 0 ? 1 : 0);
    if (this.#outputBytes + bytes > this.#limits.maxOutputBytes) {
      throw this.exceed('maxOutputBytes', `output is over ${this.#limits.maxOutputBytes} bytes`);
    }
    this.#outputBytes += bytes;
    return true;
  }

  #own(task: Promise<void>): void {
    this.#tasks.add(task);
    void task.finally(() => this.#tasks.delete(task));
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
