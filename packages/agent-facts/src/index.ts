export { callInputDigest } from './call-input-digest.js';
export { canonicalJson, chainDigest, chainLink, contentDigest } from './canonical-json.js';
export type { CommitOutcome } from './commit-error.js';
export { CommitError } from './commit-error.js';
export type { InvocationConfiguration, ToolMode } from './configuration-schema.js';
export {
  InvocationConfigurationSchema,
  ToolModeSchema,
  WorkspaceIdentity,
  WorkspaceIdentitySchema,
} from './configuration-schema.js';
export { newEventId } from './event-id.js';
export type { CommitReceipt, EventSink } from './event-sink.js';
export { EventWrite } from './event-write.js';
export type { FactIssue } from './fact-parse-error.js';
export { FactParseError } from './fact-parse-error.js';
export type {
  ApprovalDecisionKind,
  Fact,
  FactKind,
  FactOf,
  InvocationInput,
  InvocationOutcome,
  ReconciliationDecision,
  RequestSource,
} from './fact-schema.js';
export {
  ApprovalDecisionKindSchema,
  FactSchema,
  factKind,
  factNeedsResult,
  IdempotencyKeySchema,
  InvocationInputSchema,
  InvocationOutcomeSchema,
  ReconciliationDecisionSchema,
  RedispatchAttemptSchema,
  RequestSourceSchema,
} from './fact-schema.js';
export type { FactumErrorOptions } from './factum-error.js';
export { FactumError } from './factum-error.js';
export type { HandoffExecution, HandoffIntent, HandoffPause } from './handoff-schema.js';
export {
  HandoffExecutionSchema,
  HandoffIntentSchema,
  HandoffPauseSchema,
  successorOf,
} from './handoff-schema.js';
export type { Invocation, LogScope, RunBoundary } from './invocation-schema.js';
export { InvocationSchema, LogScopeSchema, RunBoundarySchema } from './invocation-schema.js';
export type { JsonValue } from './json-value.js';
export { isJsonValue, JsonValueSchema } from './json-value.js';
export type {
  ModelFinishReason,
  ModelObservation,
  ModelPart,
  ModelPurpose,
  ModelStep,
  ModelToolCall,
  ModelUsage,
} from './model-step-schema.js';
export {
  emptyUsage,
  ModelFinishReasonSchema,
  ModelObservationSchema,
  ModelPartSchema,
  ModelPurposeSchema,
  ModelStepSchema,
  ModelToolCallSchema,
  ModelUsageSchema,
} from './model-step-schema.js';
export { parseWith } from './parse.js';
export type { EventOrigin } from './runtime-event.js';
export { parseFact, RuntimeEvent, RuntimeEventSchema } from './runtime-event.js';
export { sameJson } from './same-json.js';
export type { StepToolCall } from './step-operation-ids.js';
export { StepOperationIds, stepToolCalls } from './step-operation-ids.js';
export type { TerminalStatus } from './terminal-status.js';
export { TerminalStatusSchema, terminalStatusOf } from './terminal-status.js';
export type { ToolCallContext } from './tool-call-context.js';
export { idempotencyKeyOf } from './tool-call-context.js';
export type {
  FactError,
  ResultReference,
  ToolCall,
  ToolOrigin,
  ToolOutcome,
  ToolSource,
} from './tool-call-schema.js';
export {
  FactErrorSchema,
  providerOperationId,
  ResultReferenceSchema,
  ToolCallIdentity,
  ToolCallIdentitySchema,
  ToolCallSchema,
  ToolOriginSchema,
  ToolOutcomeSchema,
  ToolSourceSchema,
} from './tool-call-schema.js';
export type { ToolErrorCode } from './tool-error.js';
export { ToolError } from './tool-error.js';
export type { ToolExecutor } from './tool-executor.js';
export type { Language, ToolRejection } from './tool-rejection.js';
export { rejectionSentence, ToolRejectionSchema } from './tool-rejection.js';
export { ToolResult } from './tool-result.js';
