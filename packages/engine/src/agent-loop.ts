import {
  emptyUsage,
  type FactError,
  type HandoffIntent,
  type HandoffPause,
  type InvocationOutcome,
  type ModelStep,
  ToolError,
} from '@factum/agent-facts';
import type { CodeExecutor } from '@factum/code-runtime';
import { AppendRefusedError, type EventLog } from '@factum/event-log';
import { ModelError, type ModelExecutor } from '@factum/model';
import { type CapturedTools, RunTools } from '@factum/tools';
import { toolCallsOf } from './context-projection.js';
import { continueApproved } from './continue-approved.js';
import { executionFingerprint } from './execution-fingerprint.js';
import { outcomeOfFinalStep } from './final-step.js';
import type { HandoffGate, Sealing } from './handoff-gate.js';
import type { InvocationWriter } from './invocation-writer.js';
import { addUsage, type ContextBounds, modelTurn, type RunObserver } from './model-turn.js';
import { openingRefused } from './opening-refused.js';
import { answerOf } from './run-answer.js';
import { RunError } from './run-error.js';
import type { RunInput, RunOutcome } from './run-input.js';
import type { SessionProjection } from './session-projection.js';

/** What one worker needs; the engine builds it at admission. */
export type LoopContext = {
  readonly log: EventLog;
  readonly models: ModelExecutor;
  readonly code: CodeExecutor;
  readonly input: RunInput;
  readonly writer: InvocationWriter;
  /** The session's history in memory, advanced by the writer. */
  readonly projection: SessionProjection;
  readonly gate: HandoffGate;
  readonly signal: AbortSignal;
  readonly maxSteps: number;
  readonly bounds: ContextBounds;
  readonly observer?: RunObserver;
  /**
   * Starts the run over when the log refused its riding opening `session_moved` (its
   * first prompt was built on a history another writer had moved on): admission again,
   * on the log's head, and a writer with the opening riding anew. Absent: no start over.
   */
  readonly restart?: () => Promise<InvocationWriter>;
};

/** Starts over at most this often; a session that keeps moving ends the run `busy`. */
const MAX_STARTS = 3;

export const CANCELLATION_SOURCE = 'runtime_cancellation';

/**
 * The worker of one invocation: model step, the step's tools, the next step — until the
 * model stops, a limit is hit, the run is cancelled or a handoff is committed — then
 * `invocation_ended`, written only after every effect it started has settled.
 */
export class AgentLoop {
  readonly #context: LoopContext;
  /** The context's writer, or the one a start over made. */
  #writer: InvocationWriter;
  #steps = 0;
  #usage = emptyUsage();
  #last: { stepId: string; step: ModelStep } | undefined;
  #sealing: Sealing | undefined;

  constructor(context: LoopContext) {
    this.#context = context;
    this.#writer = context.writer;
  }

  /**
   * Runs the invocation to its end. A run whose riding opening the log refused as built
   * on a moved session wrote nothing and started no effect: it starts over from
   * admission (the observers saw the discarded step's previews, never a result).
   */
  async run(): Promise<RunOutcome> {
    let outcome: InvocationOutcome['kind'] = 'failed';
    try {
      for (let starts = 1; ; starts += 1) {
        const ended = await this.#attempt(starts < MAX_STARTS);
        if (ended !== undefined) {
          outcome = ended.outcome.kind;
          return ended;
        }
        this.#steps = 0;
        this.#usage = emptyUsage();
        this.#last = undefined;
        this.#writer = await this.#context.restart!();
      }
    } finally {
      this.#context.gate.close(
        () => new RunError('handoff_unavailable', `the run ended (${outcome}) before a safe point`),
      );
    }
  }

  /** One start of the run; `undefined` when it must start over (see `run`). */
  async #attempt(mayStartOver: boolean): Promise<RunOutcome | undefined> {
    const { input, code } = this.#context;
    const writer = this.#writer;
    const tools = new RunTools({
      // Through the writer: a T1, T2 or rejection carries the model step before it along.
      sink: writer,
      invocation: input.invocation,
      catalog: input.work.tools,
      mode: input.configuration.toolMode,
      code,
      approval: approvalsOf(input),
    });
    let outcome: InvocationOutcome;
    try {
      outcome = await this.#loop(await tools.capture(input.configuration.cwd));
    } catch (error) {
      outcome = { kind: 'failed', error: classify(error) };
    }
    try {
      await tools.shutdown();
    } catch (error) {
      if (outcome.kind !== 'failed') outcome = { kind: 'failed', error: classify(error) };
    }
    let endSequence: number;
    try {
      endSequence = await writer.write({ kind: 'invocation_ended', outcome });
      this.#sealing?.settle.resolve(this.#sealing.pause);
    } catch (error) {
      // An opening the log refused (it rode with the first waited-for commit): nothing of
      // this run was written, and the caller learns why as from `start`.
      const refused = await writer.openingRefusal();
      const moved = AppendRefusedError.isInstance(refused) && refused.code === 'session_moved';
      // Not a run that was cancelled or sealed meanwhile: it ends as it would have.
      const { restart, signal } = this.#context;
      const again = moved && mayStartOver && restart !== undefined && !signal.aborted;
      if (again && this.#sealing === undefined) return undefined;
      this.#sealing?.settle.reject(error);
      if (refused !== undefined) throw openingRefused(refused);
      throw new RunError(
        'persistence',
        'the end of the invocation could not be recorded; recovery will end it',
        { cause: error },
      );
    }
    return {
      invocation: input.invocation,
      outcome,
      steps: this.#steps,
      usage: this.#usage,
      answer: answerOf(this.#last),
      endSequence,
    };
  }

  async #loop(captured: CapturedTools): Promise<InvocationOutcome> {
    const { input, gate, signal, maxSteps } = this.#context;
    const cancelled: InvocationOutcome = { kind: 'cancelled', source: CANCELLATION_SOURCE };
    // A continuation of a parked run carries out the person's decisions first.
    const parked = await continueApproved(this.#context, this.#writer, captured, signal);
    if (parked !== undefined) return { kind: 'failed', error: parked };
    for (;;) {
      if (signal.aborted) return cancelled;
      // A held handoff waits for its caller: the next step reads the session's head.
      if (gate.reserved) this.#context.projection.endLoan();
      const sealing = await gate.atSafePoint((intent) => this.#preview(intent), signal);
      if (sealing !== undefined) {
        this.#sealing = sealing;
        return { kind: 'handoff_paused', pause: sealing.pause };
      }
      if (signal.aborted) return cancelled;
      if (this.#steps >= maxSteps) {
        return {
          kind: 'failed',
          error: { code: 'step_limit', message: `the run reached its limit of ${maxSteps} model steps` },
        };
      }
      this.#steps += 1;
      const stepId = `${input.invocation.invocationId}/${this.#steps}`;
      let step: ModelStep;
      try {
        step = await modelTurn({ ...this.#context, writer: this.#writer, stepId, tools: captured.specs });
      } catch (error) {
        if (signal.aborted) return cancelled;
        throw error;
      }
      this.#usage = addUsage(this.#usage, step.usage);
      this.#last = { stepId, step };
      const calls = toolCallsOf(step.parts);
      if (calls.length === 0) return outcomeOfFinalStep(step);
      const end = await this.#runTools(captured, stepId, calls);
      if (end !== undefined) return end;
    }
  }

  /**
   * Runs the step's calls in order; after a cancel, the rest are rejected as cancelled.
   * Ends the run failed when a boundary was not confirmed (its calls that asked for
   * approval rejected as cancelled too), or parked when calls of the step wait for a
   * person's approval (no model step after them).
   */
  async #runTools(
    captured: CapturedTools,
    stepId: string,
    calls: ReturnType<typeof toolCallsOf>,
  ): Promise<InvocationOutcome | undefined> {
    const step = captured.intoStep(stepId);
    // One controller carries the run's cancellation and the step's own stop to the calls,
    // the run's signal forwarded into it for the step's time: `AbortSignal.any` would do
    // the same at several times the cost, on every step that runs tools.
    const stop = new AbortController();
    const run = this.#context.signal;
    const cancel = () => stop.abort(run.reason);
    if (run.aborted) cancel();
    else run.addEventListener('abort', cancel, { once: true });
    let failure: FactError | undefined;
    try {
      for (const call of calls) {
        try {
          await step.invoke(call, stop.signal);
        } catch (error) {
          if (
            !ToolError.isInstance(error) ||
            (error.code !== 'persistence' && error.code !== 'outcome_unknown')
          ) {
            continue;
          }
          // The log could not confirm a boundary, or an effect cannot tell whether it
          // happened: stop starting effects, end failed, leave the operation uncertain.
          failure ??= classify(error);
          stop.abort();
        }
      }
    } finally {
      run.removeEventListener('abort', cancel);
    }
    if (failure !== undefined) {
      // The run ends failed instead of parking, so nobody will decide the calls that
      // asked for approval: they are rejected like the step's calls after the failure.
      await step.withdrawAwaiting({ kind: 'cancelled' });
      return { kind: 'failed', error: failure };
    }
    const [first, ...rest] = step.awaitingApproval;
    return first === undefined ? undefined : { kind: 'approval_pending', operations: [first, ...rest] };
  }

  #preview(intent: HandoffIntent): HandoffPause {
    const { input } = this.#context;
    const replayBase =
      input.work.kind === 'continuation'
        ? input.work.source
        : input.work.kind === 'handoff'
          ? input.work.pause.execution.replayBase
          : undefined;
    return {
      intent,
      execution: {
        fingerprint: executionFingerprint(input),
        ...(input.mainOutputLimit === undefined ? {} : { mainOutputLimit: input.mainOutputLimit }),
        ...(replayBase === undefined ? {} : { replayBase }),
        steps: this.#steps,
      },
    };
  }
}

function approvalsOf(input: RunInput) {
  const work = input.work;
  return {
    ...(work.requireApproval === undefined ? {} : { requireApproval: work.requireApproval }),
    ...(work.approvalTtlMs === undefined ? {} : { approvalTtlMs: work.approvalTtlMs }),
  };
}

/** A failure as the log keeps it: a stable code and a sentence, never a secret. */
export function classify(error: unknown): FactError {
  if (ModelError.isInstance(error)) return { code: `model_${error.code}`, message: error.message };
  if (ToolError.isInstance(error)) return { code: error.code, message: error.message };
  if (RunError.isInstance(error)) return { code: error.code, message: error.message };
  return {
    code: 'internal',
    message: error instanceof Error ? error.message : 'the run failed unexpectedly',
  };
}
