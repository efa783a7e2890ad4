import type { CommitReceipt, EventWrite } from '@factum/agent-facts';

/** A write waiting in the group-commit queue, with its canonical bytes computed up front. */
export type PendingWrite = {
  readonly write: EventWrite;
  readonly body: string;
  readonly bytes: number;
  readonly resolve: (receipt: CommitReceipt) => void;
  readonly reject: (error: unknown) => void;
};

/** The writes of one group commit, as hooks see them. */
export type BatchInfo = { readonly size: number; readonly eventIds: readonly string[] };

/** Points inside a commit where a test may stop the process (crash tests), or observe. */
export type CommitHooks = {
  /** A batch's transaction is about to begin. */
  readonly batchStarted?: (batch: BatchInfo) => void;
  /** Every row of the batch is written; `COMMIT` has not run. */
  readonly beforeCommit?: (batch: BatchInfo) => void;
  /** `COMMIT` returned and the batch is on disk; no caller has been told yet. */
  readonly afterCommit?: (batch: BatchInfo) => void;
};
