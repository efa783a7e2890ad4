import {
  CommitError,
  type CommitReceipt,
  type EventSink,
  type EventWrite,
  type Fact,
} from '@factum/agent-facts';
import type { EventLog } from '@factum/event-log';

/**
 * An EventSink in front of a real log that holds deferred writes and commits them, in
 * order, in the transaction of its next commit, as the engine's sink does. It records
 * the fact kinds of every transaction it sent, and can fail the commit of one kind
 * (the whole transaction, riders included, as a failed batch does).
 */
export class RidingSink implements EventSink {
  readonly transactions: Fact['kind'][][] = [];
  failing: Fact['kind'] | undefined;
  readonly #log: EventLog;
  readonly #held: EventWrite[] = [];

  constructor(log: EventLog) {
    this.#log = log;
  }

  defer(write: EventWrite): void {
    this.#held.push(write);
  }

  async commit(write: EventWrite): Promise<CommitReceipt> {
    const group = [...this.#held.splice(0), write];
    if (write.event.fact.kind === this.failing) {
      throw CommitError.rejected(`injected: the ${this.failing} transaction failed`);
    }
    this.transactions.push(group.map((each) => each.event.fact.kind));
    const receipts = await Promise.all(this.#log.commitTogether(group));
    return receipts.at(-1)!;
  }
}
