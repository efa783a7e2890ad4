import {
  type EventOrigin,
  type EventSink,
  type Invocation,
  type Language,
  type ModelToolCall,
  StepOperationIds,
  ToolCallIdentity,
  type ToolMode,
  type ToolResult,
} from '@factum/agent-facts';
import type { CodeExecutor } from '@factum/code-runtime';
import { runExec } from './code-mode-call.js';
import { CommitLedger } from './commit-ledger.js';
import { execSpec } from './exec-tool.js';
import { type PreparedCall, type RunContext, refusal, reject, runCall } from './tool-call-runner.js';
import { EXEC_TOOL, type ToolCatalog, type ToolSpec } from './tool-catalog.js';
import { ToolLock } from './tool-lock.js';

/** Options of a run's tools. */
export type RunToolsOptions = {
  /** Where event ids and times come from (tests pass fixed ones). */
  readonly origin?: EventOrigin;
};

/** Everything a run's tools need. */
export type RunToolsInit = {
  readonly language?: Language;
  readonly sink: EventSink;
  readonly invocation: Invocation;
  readonly catalog: ToolCatalog;
  readonly mode: ToolMode;
  readonly code: CodeExecutor;
  readonly options?: RunToolsOptions;
};

/**
 * The tools of one invocation, and the protocol every call goes through: a call's
 * effect starts only after its `tool_dispatched` (T1) is durable, its outcome is
 * recorded as `tool_settled` (T2), and a commit failure at either is a persistence
 * error, never a success.
 *
 * @example
 * const run = new RunTools({ sink: log, invocation, catalog, mode: 'direct', code: new CodeExecutor() });
 * const step = (await run.capture(cwd)).intoStep('step-1');
 * const result = await step.invoke(call, signal);
 * await run.shutdown();
 */
export class RunTools {
  readonly #init: RunToolsInit;
  readonly #ledger: CommitLedger;
  readonly #lock = new ToolLock();

  constructor(init: RunToolsInit) {
    this.#init = init;
    this.#ledger = new CommitLedger(init.sink, init.invocation, init.options?.origin);
  }

  /** Fixes the tool set for the run and says what the model will see. */
  async capture(cwd: string, signal?: AbortSignal): Promise<CapturedTools> {
    signal?.throwIfAborted();
    const { catalog, mode } = this.#init;
    const specs =
      mode === 'code_mode'
        ? [execSpec(catalog), ...catalog.specs((entry) => entry.registration.nesting === 'direct_only')]
        : catalog.specs();
    const context = { ledger: this.#ledger, lock: this.#lock, language: this.#init.language ?? 'en' };
    return new CapturedTools({ ...context, catalog, mode, code: this.#init.code }, { cwd, specs });
  }

  /**
   * Waits for every call still running, then rejects with `ToolError('persistence')`
   * if any commit of this run's tools failed — even one a cell's JS caught.
   */
  shutdown(): Promise<void> {
    return this.#ledger.settle();
  }
}

type CaptureContext = RunContext & {
  readonly catalog: ToolCatalog;
  readonly mode: ToolMode;
  readonly code: CodeExecutor;
};

/** The tools of a run as captured: what the model sees, and calls by step. */
export class CapturedTools {
  readonly #context: CaptureContext;
  readonly cwd: string;
  readonly specs: readonly ToolSpec[];

  constructor(context: CaptureContext, view: { cwd: string; specs: ToolSpec[] }) {
    this.#context = context;
    this.cwd = view.cwd;
    this.specs = view.specs;
  }

  /**
   * The calls of one model step; operation ids are `${stepId}:${callId}` (a repeated
   * call id gets its own, see `StepOperationIds`). Invoke the calls in the step's order.
   */
  intoStep(stepId: string): StepTools {
    return new StepTools(this.#context, stepId);
  }
}

/** The tool calls of one model step. */
export class StepTools {
  readonly #context: CaptureContext;
  readonly #operations: StepOperationIds;
  readonly stepId: string;

  constructor(context: CaptureContext, stepId: string) {
    this.#context = context;
    this.#operations = new StepOperationIds(stepId);
    this.stepId = stepId;
  }

  /**
   * Runs one call the model made. Resolves with the recorded result; rejects with a
   * `ToolError`: `invalid_input` / `unavailable` / `cancelled` (rejected: recorded,
   * nothing ran), `failed` (ran and failed: recorded), `persistence` (a commit failed:
   * the outcome is uncertain and is never reported as success). A call whose id an
   * earlier call of the step already used is rejected (`repeated_call_id`, an
   * `invalid_input` error) and never runs: the first call with that id is the one.
   */
  invoke(call: ModelToolCall, signal: AbortSignal = new AbortController().signal): Promise<ToolResult> {
    const context = this.#context;
    const { operationId, repeated } = this.#operations.next(call.id);
    const isExec = context.mode === 'code_mode' && call.name === EXEC_TOOL;
    const entry = context.catalog.get(call.name);
    const directEntry =
      context.mode === 'code_mode' && entry?.registration.nesting === 'nestable' ? undefined : entry;
    const prepared: PreparedCall = {
      operationId,
      identity: ToolCallIdentity.provider(this.stepId, call.id),
      call: {
        id: call.id,
        name: call.name,
        input: call.input,
        origin: { kind: 'provider', stepId: this.stepId },
      },
      entry: directEntry,
      ...(call.invalidArguments === undefined ? {} : { invalidArguments: call.invalidArguments }),
    };
    const work = repeated
      ? reject(context, prepared, { kind: 'repeated_call_id' })
      : isExec
        ? runExec(context, prepared, signal)
        : (async () => {
            const why = refusal(prepared, signal);
            if (why !== undefined) return reject(context, prepared, why);
            return runCall(context, prepared, signal);
          })();
    return context.ledger.track(work);
  }
}
