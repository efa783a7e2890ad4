export { ascendingIds } from './ascending-id.js';
export type { ConversationTimeouts } from './backend-context.js';
export type { Clock, TimerHandle } from './clock.js';
export { systemClock } from './clock.js';
export type {
  AbortResult,
  ConversationBackend,
  ConversationEvent,
  PromptRequest,
  PromptStream,
} from './conversation-backend.js';
export type {
  ConversationErrorInit,
  DeadlineKind,
  ErrorContext,
  ErrorDetail,
  ErrorKind,
  ErrorOperation,
  ErrorPhase,
} from './conversation-error.js';
export { ConversationError } from './conversation-error.js';
export { digestWrites } from './digest-writes.js';
export type { OpenCodeBackendOptions } from './opencode-backend.js';
export { OpenCodeBackend } from './opencode-backend.js';
export type { PostgresPromptStoreOptions } from './postgres-prompt-store.js';
export { openPostgresPromptStore } from './postgres-prompt-store.js';
export type { PromptOutcome } from './prompt-outcome.js';
export type { PromptCancellation, PromptPhase, PromptRecord, PromptWaiter } from './prompt-record.js';
export { parsePromptRecord, promptKey } from './prompt-record.js';
export type {
  CommitReceipt,
  PromptStore,
  PromptTransaction,
  PromptWrite,
  TransactionPurpose,
} from './prompt-store.js';
export type { PromptStoreFailure } from './prompt-store-error.js';
export { PromptStoreError } from './prompt-store-error.js';
export type { SqlitePromptStoreOptions } from './sqlite-prompt-store.js';
export { openSqlitePromptStore } from './sqlite-prompt-store.js';
