import type {
  HandoffPause,
  Invocation,
  InvocationConfiguration,
  InvocationOutcome,
  ModelPart,
  ModelUsage,
  RunBoundary,
} from '@factum/agent-facts';
import type { ProviderConfig } from '@factum/model';
import type { ToolCatalog } from '@factum/tools';

/** Approvals a run demands on top of its tools' own rules. */
export type RunApprovals = {
  /** Every call of these tools waits for a person's approval in this run. */
  readonly requireApproval?: readonly string[];
  /** An approval of this run not decided within this many milliseconds expires. */
  readonly approvalTtlMs?: number;
};

/**
 * What the run does: answer a message, continue from a boundary, or resume a handoff.
 * A continuation from a run parked on approvals first runs the approved calls with
 * their recorded input and records the denied and expired ones as rejected.
 */
export type RunWork =
  | ({
      readonly kind: 'message';
      readonly message: string;
      readonly sourceMessages?: readonly string[];
      /** Start even if earlier operations in this history have unknown outcomes. */
      readonly allowPriorUnknown?: boolean;
      readonly tools: ToolCatalog;
    } & RunApprovals)
  | ({
      readonly kind: 'continuation';
      readonly source: RunBoundary;
      readonly allowPriorUnknown?: boolean;
      readonly tools: ToolCatalog;
    } & RunApprovals)
  | ({
      readonly kind: 'handoff';
      readonly source: RunBoundary;
      readonly pause: HandoffPause;
      readonly tools: ToolCatalog;
    } & RunApprovals);

/** Everything one run needs. Secrets live only in `provider.auth` and never reach the log. */
export type RunInput = {
  readonly invocation: Invocation;
  readonly provider: ProviderConfig;
  readonly providerOptions?: Readonly<Record<string, unknown>>;
  /** The most output tokens one model request may produce. */
  readonly mainOutputLimit?: number;
  readonly configuration: InvocationConfiguration;
  /** A digest the caller computed of its request, kept with a continuation (a manual resume). */
  readonly requestFingerprint?: string;
  /** A system prompt sent before the history (not part of the log's facts). */
  readonly instructions?: string;
  readonly work: RunWork;
};

/** A part of the final answer: what the model said, or its refusal in its own words. */
export type AnswerPart = Extract<ModelPart, { kind: 'text' | 'refusal' }>;

/**
 * The run's final answer as its facts say it: the text and refusal parts of its last
 * model step (`model_completed` of `stepId`), in order, and their text joined. No step:
 * no parts, `stepId` undefined.
 */
export type RunAnswer = {
  readonly stepId: string | undefined;
  readonly parts: readonly AnswerPart[];
  /** The text parts joined (refusals left out: they are not an answer). */
  readonly text: string;
  /** Whether the last step holds a refusal part. */
  readonly refused: boolean;
};

/**
 * How a run ended, with what it used. `outcome.kind === 'approval_pending'` names the
 * operations that wait for a person (`engine.decide`), after which a continuation from
 * the run's boundary (`engine.parkedRun`) carries on.
 */
export type RunOutcome = {
  readonly invocation: Invocation;
  readonly outcome: InvocationOutcome;
  readonly steps: number;
  readonly usage: ModelUsage;
  /** The final answer, without reading the log. */
  readonly answer: RunAnswer;
  /** The sequence of its `invocation_ended`: `read({ afterSequence })` pages on from it. */
  readonly endSequence: number;
};
