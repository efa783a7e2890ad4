import type { CommitReceipt, RuntimeEvent } from '@factum/agent-facts';
import type { WriterStamp } from './invocation-owner.js';
import type { AppendRefusal } from './rule-refusal.js';
import type { SessionHead } from './session-head.js';

/**
 * A write ready for the store: the parsed event, its canonical bytes and its tool
 * result as text. Plain data, so a batch can cross to the writer thread.
 */
export type StagedWrite = {
  readonly event: RuntimeEvent;
  readonly body: string;
  readonly bytes: number;
  /** `contentDigest(body)`: made where the write is staged, off the writer's path. */
  readonly digest: string;
  readonly result?: { readonly digest: string; readonly text: string };
  /** The lease of the log that writes it; absent for a log without one. */
  readonly writer?: WriterStamp;
  /** Recovery's write: it may move the invocation from an owner whose lease expired. */
  readonly takeover?: boolean;
  /**
   * The session head its group was built on (`commitTogether`'s `onHead`): one object
   * shared by every write of the group, judged once, before the group's first write.
   */
  readonly onHead?: SessionHead;
};

/** What became of one write of a committed batch. */
export type WriteOutcome =
  | { readonly stored: CommitReceipt }
  | { readonly refused: { readonly code: AppendRefusal; readonly message: string } };

/**
 * What became of a batch: committed (each write stored or refused alone, `outcomes` in
 * the batch's order), or failed as a whole — `committing` when `COMMIT` itself failed,
 * so the store may have kept it. A failed batch's `outcomes` holds what the rules had
 * decided before it failed: a write they refused stays refused.
 */
export type BatchResult =
  | {
      readonly kind: 'committed';
      readonly outcomes: readonly WriteOutcome[];
      readonly committer: Committer;
      /** How long the transaction took where it ran, fsync included. */
      readonly elapsedMs: number;
      /**
       * The part of `elapsedMs` until the transaction held the log's writer position
       * (opening it, waiting for other writers, reading what they changed); the rest is
       * how long it held the position, which other writers waited for.
       */
      readonly waitedMs: number;
      /** The whole transaction went to the store as one message. */
      readonly oneTrip?: boolean;
      /** A first try as one message met a stale head and wrote nothing; this is the second. */
      readonly staleHead?: boolean;
    }
  | {
      readonly kind: 'failed';
      readonly committing: boolean;
      readonly cause: unknown;
      readonly outcomes: readonly WriteOutcome[];
    };

/** Commits batches of staged writes: on the event loop, or in the writer thread. */
export interface BatchWriter {
  readonly committer: Committer;
  /** True when a batch settles in an I/O callback (a thread's reply, a network store). */
  readonly endsInIo: boolean;
  /** Commits a batch: before it returns on the event loop, else through a promise. Never throws. */
  write(batch: readonly StagedWrite[]): BatchResult | Promise<BatchResult>;
  close(): Promise<void>;
}

/** Where a batch commits: on the event loop, or in the process's writer thread. */
export type Committer = 'event_loop' | 'writer_thread';

/** The writes of one group commit, as hooks see them, and where it commits. */
export type BatchInfo = {
  readonly size: number;
  readonly eventIds: readonly string[];
  readonly committer: Committer;
  /** After commit: how long the batch waited for the writer position, then held it (ms). */
  readonly timing?: { readonly waitedMs: number; readonly heldMs: number };
};

/** Points inside a commit where a test may stop the process (crash tests), or observe. */
export type CommitHooks = {
  /** A batch's transaction is about to begin. */
  readonly batchStarted?: (batch: BatchInfo) => void;
  /** Every row of the batch is written; `COMMIT` has not run. */
  readonly beforeCommit?: (batch: BatchInfo) => void;
  /** `COMMIT` returned and the batch is on disk; no caller has been told yet. */
  readonly afterCommit?: (batch: BatchInfo) => void;
};
