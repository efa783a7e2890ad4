import type { EventWrite } from './event-write.js';

/** What a durable commit returns: where the event stands in the log and its chain digest. */
export type CommitReceipt = {
  readonly sequence: number;
  readonly eventId: string;
  readonly digest: string;
};

/**
 * Where facts are committed. `commit` resolves only once the write is durable; it
 * rejects with `CommitError` (`rejected`: not written; `outcome_unknown`: maybe
 * written). The tools layer depends on this interface, not on a particular log.
 */
export interface EventSink {
  commit(write: EventWrite): Promise<CommitReceipt>;
}
