import type {
  HandoffPause,
  Invocation,
  InvocationConfiguration,
  InvocationOutcome,
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
};
