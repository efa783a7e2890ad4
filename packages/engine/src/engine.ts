import type { EventOrigin } from '@factum/agent-facts';
import type { CodeExecutor } from '@factum/code-runtime';
import { AppendRefusedError, type EventLog, recoverInvocations } from '@factum/event-log';
import type { ModelExecutor } from '@factum/model';
import { admit } from './admission.js';
import { AgentLoop } from './agent-loop.js';
import { HandoffGate } from './handoff-gate.js';
import { InvocationWriter } from './invocation-writer.js';
import type { ContextBounds, RunObserver } from './model-turn.js';
import { RunError } from './run-error.js';
import type { RunInput, RunOutcome } from './run-input.js';
import { RunningInvocation } from './running-invocation.js';

/** Options of an engine. */
export type EngineOptions = {
  /** Model steps per invocation at most (default 50). */
  readonly maxSteps?: number;
  /** Bounds of the session history a prompt is built from. */
  readonly contextBounds?: ContextBounds;
  /**
   * End invocations left unfinished by a process that died, before the first admission
   * (default true). Turn it off where other processes share the log and may still be
   * running them.
   */
  readonly recoverOnStart?: boolean;
  /** Where event ids and times come from. */
  readonly origin?: EventOrigin;
};

/** Options of one run. */
export type RunOptions = { readonly signal?: AbortSignal; readonly observer?: RunObserver };

/**
 * Runs agent invocations durably over an event log: one live invocation per session,
 * every model step and tool effect recorded as facts, cancellation that lets a
 * dispatched effect finish and settle, and handoffs at safe points.
 *
 * @example
 * const engine = new Engine({ log, models: new ModelExecutor({ timeoutMs: 60_000 }), code: new CodeExecutor() });
 * const outcome = await engine.run(input, { signal });
 * await engine.drain();
 */
export class Engine {
  readonly #log: EventLog;
  readonly #models: ModelExecutor;
  readonly #code: CodeExecutor;
  readonly #options: Required<Omit<EngineOptions, 'origin'>> & Pick<EngineOptions, 'origin'>;
  readonly #live = new Set<string>();
  readonly #workers = new Set<Promise<unknown>>();
  #recovered: Promise<number> | undefined;

  constructor(init: { log: EventLog; models: ModelExecutor; code: CodeExecutor; options?: EngineOptions }) {
    this.#log = init.log;
    this.#models = init.models;
    this.#code = init.code;
    this.#options = {
      maxSteps: init.options?.maxSteps ?? 50,
      contextBounds: init.options?.contextBounds ?? { maxEvents: 250_000, maxBytes: 256 * 1024 * 1024 },
      recoverOnStart: init.options?.recoverOnStart ?? true,
      origin: init.options?.origin,
    };
  }

  /** Ends invocations a dead process left unfinished (once per engine); returns how many. */
  recover(): Promise<number> {
    this.#recovered ??= recoverInvocations(this.#log).catch((error: unknown) => {
      // A failed recovery is tried again at the next admission, not remembered forever.
      this.#recovered = undefined;
      throw error;
    });
    return this.#recovered;
  }

  /**
   * Admits and starts a run; resolves once `invocation_opened` is durable. Refusals
   * (`busy`, `sealed`, `fingerprint_mismatch`, …) write nothing. Aborting `signal`
   * cancels this run only.
   */
  async start(input: RunInput, options: RunOptions = {}): Promise<RunningInvocation> {
    const { sessionId } = input.invocation;
    if (options.signal?.aborted) throw new RunError('cancelled', 'the caller aborted before the run started');
    if (this.#live.has(sessionId)) {
      throw new RunError('busy', `session ${sessionId} has a live invocation; wait until it has drained`);
    }
    this.#live.add(sessionId);
    try {
      if (this.#options.recoverOnStart) await this.recover();
      const opened = await admit(this.#log, input, this.#options.contextBounds);
      const writer = new InvocationWriter(this.#log, input.invocation, this.#options.origin);
      await writer
        .write({ kind: 'invocation_opened', configuration: input.configuration, input: opened })
        .catch(refusal);
      return this.#launch(input, writer, options);
    } catch (error) {
      this.#live.delete(sessionId);
      throw error;
    }
  }

  /**
   * Runs to the end. If the caller aborts, the promise rejects at once with
   * `RunError('cancelled')` while the run finishes its in-flight effect and ends
   * cancelled in the background (`drain()` waits for it).
   */
  async run(input: RunInput, options: RunOptions = {}): Promise<RunOutcome> {
    const running = await this.start(input, options);
    const signal = options.signal;
    if (signal === undefined) return running.wait();
    return new Promise<RunOutcome>((resolve, reject) => {
      const onAbort = () =>
        reject(
          new RunError(
            'cancelled',
            'the caller aborted; the run finishes its in-flight effect and ends cancelled',
          ),
        );
      if (signal.aborted) onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      running
        .wait()
        .then(resolve, reject)
        .finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** Waits until every run this engine started has ended and its effects are durable. */
  async drain(): Promise<void> {
    while (this.#workers.size > 0) await Promise.allSettled([...this.#workers]);
  }

  #launch(input: RunInput, writer: InvocationWriter, options: RunOptions): RunningInvocation {
    const controller = new AbortController();
    const cancel = () => controller.abort();
    options.signal?.addEventListener('abort', cancel, { once: true });
    const gate = new HandoffGate();
    const loop = new AgentLoop({
      log: this.#log,
      models: this.#models,
      code: this.#code,
      input,
      writer,
      gate,
      signal: controller.signal,
      maxSteps: this.#options.maxSteps,
      bounds: this.#options.contextBounds,
      ...(options.observer ? { observer: options.observer } : {}),
    });
    const done = loop.run().finally(() => {
      options.signal?.removeEventListener('abort', cancel);
      this.#live.delete(input.invocation.sessionId);
    });
    const tracked = done.catch(() => undefined);
    this.#workers.add(tracked);
    void tracked.then(() => this.#workers.delete(tracked));
    return new RunningInvocation({ invocation: input.invocation, handoff: gate, done, cancel });
  }
}

function refusal(error: unknown): never {
  if (AppendRefusedError.isInstance(error)) {
    if (error.code === 'session_busy') throw new RunError('busy', error.message, { cause: error });
    if (error.code === 'session_held') throw new RunError('sealed', error.message, { cause: error });
  }
  throw new RunError('persistence', 'the opening of the invocation could not be recorded', { cause: error });
}
