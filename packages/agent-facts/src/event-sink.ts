import type { EventWrite } from './event-write.js';
import type { RuntimeEvent } from './runtime-event.js';

/** What a durable commit returns: where the event stands in the log and its chain digest. */
export type CommitReceipt = {
  readonly sequence: number;
  readonly eventId: string;
  readonly digest: string;
  /**
   * The session chain's digest at this event, when the log keeps one: equal to the link
   * of the session's head the writer knew and this event's digest only if nothing else
   * entered the session between them.
   */
  readonly sessionDigest?: string;
};

/**
 * Where facts are committed. `commit` resolves only once the write is durable; it
 * rejects with `CommitError` (`rejected`: not written; `outcome_unknown`: maybe
 * written). The tools layer depends on this interface, not on a particular log.
 */
export interface EventSink {
  commit(write: EventWrite): Promise<CommitReceipt>;
  /**
   * Optional: records `write` without waiting for it, to become durable in the same
   * transaction as the sink's next `commit`, before it and in order — so a crash keeps
   * both or neither, and a refusal of `write` fails that commit. For facts nobody
   * outside may observe before the next waited-for fact: a request for approval that
   * the run's parking end makes visible, a read-only tool's dispatch that its settlement
   * makes durable, the first of a Code mode call's two dispatches or two settlements.
   * Throws at once if the write is invalid. A sink without it commits such writes one by
   * one.
   */
  defer?(write: EventWrite): void;
  /**
   * Optional: whether the effect of `dispatch`, a T1 this sink has just committed, may
   * start now — false once the writer may no longer own what it dispatched (the lease it
   * wrote under was lost, or may lapse within a margin). Asked after every T1 resolves; a
   * sink without it always allows.
   */
  mayStartEffect?(dispatch?: RuntimeEvent): boolean;
  /**
   * Optional: the store's clock now, in milliseconds since the epoch. Deadlines the
   * store judges by its own clock (an approval's `expiresAt`) are computed from it, so a
   * host whose clock is off writes none already past. A sink without it: the host's.
   */
  databaseNow?(): Promise<number>;
}
