export type { AppendRefusal } from './append-refused-error.js';
export { AppendRefusedError } from './append-refused-error.js';
export type { InvocationApproval, PendingApproval, RecordedDecision } from './approval-queries.js';
export type { CopiedRows, CopiedTable, CopyOptions, CopyProgress, CopyReport } from './copy-log.js';
export {
  type DirectoryFs,
  makeDurableDirectory,
  nodeDirectoryFs,
  syncNewEntry,
} from './durable-directory.js';
export type { EventLogOptions, LogTarget, RunSource } from './event-log.js';
export { EventLog } from './event-log.js';
export { EventLogError } from './event-log-error.js';
export { EXPIRY_DECIDER, expireApprovals } from './expire-approvals.js';
export type { ForkPoint } from './fork-boundary.js';
export type { LeaseClock, LeaseOptions, LeaseStatus } from './host-lease.js';
export { HostLease } from './host-lease.js';
export type { InvocationOwner, WriterStamp } from './invocation-owner.js';
export type { InvocationOwnership, UnfinishedInvocation } from './invocation-ownership.js';
export type { InvocationRecovery, UndispatchedCall } from './invocation-recovery.js';
export type { InvocationProjection } from './log-prefix.js';
export { EMPTY_DIGEST, LogPrefix } from './log-prefix.js';
export type { ReadBounds } from './log-queries.js';
export type { LogStats } from './log-stats.js';
export type { RecoveryReport } from './recover-invocations.js';
export { recoverExpired, recoverInvocations } from './recover-invocations.js';
export type { SessionHead } from './session-head.js';
export { type StagedForm, stagedForm } from './stage-write.js';
export type { BatchInfo, CommitHooks } from './staged-write.js';
export type { StoredEvent } from './stored-event.js';
export type { Submission } from './submission-query.js';
export type { ChainAnchor, ChainReport, VerifyOptions } from './verify-chain.js';
