import type { Fact, ModelUsage } from '@factum/agent-facts';

/** What a replay compared: the kind of the first fact that differs. */
export type DivergenceKind =
  | 'request'
  | 'answer'
  | 'call'
  | 'result'
  | 'rejection'
  | 'approval'
  | 'end'
  | 'fact';

/**
 * Where a replay and its recording part: the index of the fact in the invocation's
 * compared facts, the recorded fact's sequence in the source log, and both sides (a side
 * is absent when only the other has a fact there).
 */
export type ReplayDivergence = {
  readonly kind: DivergenceKind;
  readonly index: number;
  readonly recordedSequence?: number;
  readonly recorded?: Fact;
  readonly replayed?: Fact;
};

/** A tool call as a replay report names it. */
export type ReplayCall = {
  readonly operationId: string;
  readonly name: string;
  readonly inputDigest: string;
};

/** The final answer of a run: its text and how it ended. */
export type ReplayAnswer = { readonly text: string; readonly end: string };

/** `model` mode only: how the new model's run compares with the recorded one. */
export type ModelComparison = {
  /** Calls served their recorded result (same tool, same input digest, in order). */
  readonly sameCalls: readonly ReplayCall[];
  /** Calls no recorded call matched: not run — they would have run new effects. */
  readonly newCalls: readonly ReplayCall[];
  /** Recorded calls the new model did not make. */
  readonly missingCalls: readonly ReplayCall[];
  readonly answers: { readonly recorded: ReplayAnswer; readonly replayed: ReplayAnswer };
  readonly usage: { readonly recorded: ModelUsage; readonly replayed: ModelUsage };
  /** Model time, from the first request to the last completion (replayed: only with a clock). */
  readonly latencyMs: { readonly recorded: number; readonly replayed?: number };
};

/** The replay of one invocation. */
export type InvocationReplay = {
  readonly sessionId: string;
  readonly invocationId: string;
  readonly status: 'same' | 'diverged';
  /** How many facts were compared. */
  readonly compared: number;
  /** `verify`: the first divergence, which stopped the invocation. `model`: each new or missing call, and a different end. */
  readonly divergences: readonly ReplayDivergence[];
  readonly model?: ModelComparison;
};

/**
 * What a replay found, in log order. Holds no time and no random id: the same replay
 * of the same log gives the same report, byte for byte.
 */
export type ReplayReport = {
  readonly mode: 'verify' | 'model';
  readonly invocations: readonly InvocationReplay[];
  readonly summary: { readonly invocations: number; readonly same: number; readonly diverged: number };
};
