export type { ToolCallContext, ToolErrorCode, ToolExecutor } from '@factum/agent-facts';
export { idempotencyKeyOf, ToolError } from '@factum/agent-facts';
export type { ApprovalPolicy } from './approval-gate.js';
export { ApprovalRequested, approvalInputDigest, approvalReason } from './approval-gate.js';
export { EXEC_INPUT_SCHEMA, execSpec } from './exec-tool.js';
export type { JsonSchema, SchemaInput } from './input-schema.js';
export type { ClosedBy } from './operation-closer.js';
export type { ReconcileOptions, ReconcileOutcome, RecoverySource } from './reconcile-uncertain.js';
export { DEFAULT_MAX_ATTEMPTS, reconcileUncertain } from './reconcile-uncertain.js';
export type { ReconcileDecision, UncertainOperation } from './recovery-policy.js';
export { RecoveryPolicy } from './recovery-policy.js';
export { DEFAULT_RESULT_LIMIT, renderToolResult } from './render-tool-result.js';
export type { RunToolsInit, RunToolsOptions } from './run-tools.js';
export { CapturedTools, RunTools, StepTools } from './run-tools.js';
export type { CatalogEntry, ToolSpec } from './tool-catalog.js';
export { EXEC_TOOL, ToolCatalog } from './tool-catalog.js';
export { ToolCatalogError } from './tool-catalog-error.js';
export type {
  ToolApproval,
  ToolDefinition,
  ToolNesting,
  ToolRegistration,
  ToolSemantics,
} from './tool-registration.js';
export { ToolHandler } from './tool-registration.js';
