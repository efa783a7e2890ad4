import {
  type EventOrigin,
  type EventSink,
  type Invocation,
  type Language,
  type ModelToolCall,
  StepOperationIds,
  type ToolCall,
  ToolCallIdentity,
  ToolError,
  type ToolMode,
  type ToolRejection,
  type ToolResult,
} from '@factum/agent-facts';
import type { CodeExecutor } from '@factum/code-runtime';
import { type ApprovalPolicy, ApprovalRequested, approvalReason, requestApproval } from './approval-gate.js';
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
  /** Approvals this run demands beyond the tools' own rules. */
  readonly approval?: ApprovalPolicy;
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
    const approval = this.#init.approval ?? {};
    return new CapturedTools({ ...context, catalog, mode, code: this.#init.code, approval }, { cwd, specs });
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
  readonly approval: ApprovalPolicy;
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

  /**
   * Runs a call a person approved, with exactly the input recorded in its
   * `approval_requested` (the log checks the digest inside T1's transaction), through the
   * same checks and T1 → effect → T2 as any call — but never asks for approval again.
   * A tool this run does not offer, or an input its schema now refuses, is rejected.
   */
  dispatchApproved(operationId: string, call: ToolCall, signal: AbortSignal): Promise<ToolResult> {
    const context = this.#context;
    const prepared = preparedParked(context, operationId, call);
    const work = (async () => {
      const why = refusal(prepared, signal);
      if (why !== undefined) return reject(context, prepared, why);
      return runCall(context, prepared, signal, { approved: true });
    })();
    return context.ledger.track(work);
  }

  /** Records that a parked call will not run (`denied` or `expired`); throws its `ToolError`. */
  rejectParked(operationId: string, call: ToolCall, reason: ToolRejection): Promise<never> {
    const context = this.#context;
    return context.ledger.track(reject(context, preparedParked(context, operationId, call), reason));
  }
}

function preparedParked(context: CaptureContext, operationId: string, call: ToolCall): PreparedCall {
  const stepId = call.origin.kind === 'provider' ? call.origin.stepId : call.origin.parentOperationId;
  const entry = context.catalog.get(call.name);
  return {
    operationId,
    identity:
      call.origin.kind === 'provider'
        ? ToolCallIdentity.provider(stepId, call.id)
        : ToolCallIdentity.codeMode(stepId, call.id),
    call,
    entry: context.mode === 'code_mode' && entry?.registration.nesting === 'nestable' ? undefined : entry,
  };
}

/** The tool calls of one model step. */
export class StepTools {
  readonly #context: CaptureContext;
  readonly #operations: StepOperationIds;
  readonly #awaiting: PreparedCall[] = [];
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
            const reason = approvalReason(prepared.entry!, call.input, context.approval);
            if (reason !== undefined) {
              await requestApproval(context, prepared, reason, context.approval);
              this.#awaiting.push(prepared);
              throw new ApprovalRequested(operationId, call.name);
            }
            return runCall(context, prepared, signal);
          })();
    return context.ledger.track(work);
  }

  /**
   * The operations of this step that wait for a person's approval (each rejected its
   * `invoke` with `ApprovalRequested`); the invocation parks on them after the step.
   */
  get awaitingApproval(): readonly string[] {
    return this.#awaiting.map((prepared) => prepared.operationId);
  }

  /**
   * Records that the calls waiting for approval will not run after all: the step failed
   * before its run could park on them, so nobody will decide them. Each gets its
   * `tool_rejected` (`reason`), in the step's order, and none is left requested with no
   * closing fact. Resolves with the operations recorded; one whose rejection could not
   * be recorded (the log failed) is left out, and recovery or the log has the last word.
   */
  async withdrawAwaiting(reason: ToolRejection): Promise<string[]> {
    const context = this.#context;
    const withdrawn: string[] = [];
    for (const prepared of this.#awaiting.splice(0)) {
      try {
        await context.ledger.track(reject(context, prepared, reason));
      } catch (error) {
        // `reject` throws the rejection's own error once it is recorded.
        if (ToolError.isInstance(error) && error.code !== 'persistence') withdrawn.push(prepared.operationId);
      }
    }
    return withdrawn;
  }
}
