import type { RuntimeEvent } from '@factum/agent-facts';
import type { LeaseView, WriterStamp } from './invocation-owner.js';
import { RuleRefusal } from './rule-refusal.js';

/** A write as the writer's lease rule sees it. */
export type LeasedWrite = {
  readonly event: RuntimeEvent;
  readonly writer?: WriterStamp;
  readonly takeover?: boolean;
};

/**
 * Whether `write` starts new work — a run (`invocation_opened`) or an effect
 * (`tool_dispatched`, the T1) — under a lease: such a write is accepted only while its
 * writer's own lease is live by the database's clock, read in its transaction.
 * Recovery's takeovers and writes of a log without a lease are not checked.
 */
export function startsLeasedWork(write: LeasedWrite): boolean {
  if (write.writer === undefined || write.takeover) return false;
  const kind = write.event.fact.kind;
  return kind === 'invocation_opened' || kind === 'tool_dispatched';
}

/**
 * Refuses (`lease_expired`) a write that starts work unless its writer's lease — same
 * host, same epoch, a row that can be trusted — runs past `leases.now`, the database's
 * clock in the write's transaction. A host whose process stalled, or whose batch a
 * network held past its lease, learns it here instead of starting an effect a survivor
 * may already have ended the run for. A view the store checks (`checkedByStore`, a
 * batch sent as one message) leaves the check to the store's statement.
 */
export function checkWriterLease(write: LeasedWrite, leases: LeaseView | undefined): void {
  if (!startsLeasedWork(write) || leases?.checkedByStore) return;
  const writer = write.writer!;
  const lease = leases?.hosts.get(writer.hostId);
  const who = `host ${writer.hostId} (epoch ${writer.epoch})`;
  if (leases === undefined || lease === undefined) {
    throw new RuleRefusal('lease_expired', `${who} has no lease in the log: it starts no run or effect`);
  }
  if (!lease.valid) {
    throw new RuleRefusal(
      'lease_expired',
      `the lease row of ${who} cannot be trusted (${lease.reason}): it starts no run or effect`,
    );
  }
  if (lease.epoch !== writer.epoch || lease.expiresAt <= leases.now) {
    throw new RuleRefusal(
      'lease_expired',
      lease.epoch !== writer.epoch
        ? `${who} was registered again (epoch ${lease.epoch}): this writer starts no run or effect`
        : `the lease of ${who} expired at ${new Date(lease.expiresAt).toISOString()} by the database's clock (now ${new Date(leases.now).toISOString()}): it starts no run or effect`,
    );
  }
}
