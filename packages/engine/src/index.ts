export { CANCELLATION_SOURCE } from './agent-loop.js';
export type { ApprovalDecision, DecideOptions } from './approval-decision.js';
export { lineage, projectMessages } from './context-projection.js';
export type { EngineOptions, RunOptions } from './engine.js';
export { Engine } from './engine.js';
export { executionFingerprint } from './execution-fingerprint.js';
export { HandoffGate, HandoffReservation, HeldHandoff } from './handoff-gate.js';
export type { ContextBounds, RunObserver } from './model-turn.js';
export type { OperationResolution, ResolveOptions } from './operator-resolution.js';
export type { ParkedRunView } from './parked-run-view.js';
export type {
  DivergenceKind,
  InvocationReplay,
  ModelComparison,
  ReplayAnswer,
  ReplayCall,
  ReplayDivergence,
  ReplayReport,
} from './replay/replay-report.js';
export type { OpenedInvocation, ReplayAgent, ReplayOptions, ReplayTarget } from './replay/replay-setup.js';
export { recordedOutcome } from './run-answer.js';
export type { RunErrorCode } from './run-error.js';
export { RunError } from './run-error.js';
export type { AnswerPart, RunAnswer, RunApprovals, RunInput, RunOutcome, RunWork } from './run-input.js';
export { RunningInvocation } from './running-invocation.js';
export type { ForkedSession, ForkOptions, ForkSource } from './session-fork.js';
