import type { RuntimeEvent } from '@factum/agent-facts';
import {
  type InvocationOwner,
  type LeaseView,
  RECOVERED_OWNER,
  sameOwner,
  type WriterStamp,
} from './invocation-owner.js';
import { RuleRefusal } from './rule-refusal.js';

/** A write as the fencing rule sees it: its event, who writes it, and whether it takes over. */
export type FencedWrite = {
  readonly event: RuntimeEvent;
  readonly writer?: WriterStamp;
  readonly takeover?: boolean;
};

/**
 * Checks that `write` comes from the invocation's owner, or may take it over. Returns
 * the invocation's new owner when a takeover moves it; throws `RuleRefusal`:
 * - `fenced`: the invocation belongs to another host or epoch (a takeover moved it, or
 *   this writer's lease was lost): the write is refused, whatever it says.
 * - `owner_live`: a takeover of an invocation whose owner's lease is live by the
 *   database's clock.
 * - `host_row_invalid`: a takeover of an invocation whose owner's host row cannot be
 *   trusted; nothing is ended on its account.
 * Invocations opened without a lease have no owner, and accept any writer. A
 * `tool_reconciled` (and the `tool_redispatched` of a recorded re-run) is evidence about
 * the past that any host may record, and an `approval_decided` is a person's decision,
 * recorded from wherever they decided. A re-run's progress notes are not exempt: a stale
 * owner's notes must be fenced, so only the invocation's owner records them.
 */
export function checkOwner(
  write: FencedWrite,
  owner: InvocationOwner | null,
  leases: LeaseView | undefined,
): { readonly newOwner: InvocationOwner } | undefined {
  const { event, writer } = write;
  const kind = event.fact.kind;
  if (
    kind === 'tool_reconciled' ||
    kind === 'tool_redispatched' ||
    kind === 'approval_decided' ||
    owner === null
  ) {
    return undefined;
  }
  if (sameOwner(owner, writer)) return undefined;
  const { invocationId, sessionId } = event.invocation;
  if (!write.takeover) {
    throw new RuleRefusal(
      'fenced',
      `invocation ${invocationId} of session ${sessionId} is owned by host ${owner.hostId} (epoch ${owner.epoch}), not by ${describe(writer)}: this writer was fenced off when its lease was lost or the invocation was taken over`,
    );
  }
  const lease = leases?.hosts.get(owner.hostId);
  if (lease !== undefined && !lease.valid) {
    throw new RuleRefusal(
      'host_row_invalid',
      `the row of host ${owner.hostId}, owner of invocation ${invocationId}, cannot be trusted (${lease.reason}): nothing of it is ended; fix or delete the row`,
    );
  }
  if (leases === undefined) throw new Error('unreachable: a takeover batch reads the leases');
  if (lease !== undefined && lease.epoch === owner.epoch && lease.expiresAt > leases.now) {
    throw new RuleRefusal(
      'owner_live',
      `invocation ${invocationId} of session ${sessionId} is owned by host ${owner.hostId} (epoch ${owner.epoch}), whose lease is live until ${new Date(lease.expiresAt).toISOString()}: only an expired owner's invocations are taken over`,
    );
  }
  return { newOwner: writer ?? RECOVERED_OWNER };
}

function describe(writer: WriterStamp | undefined): string {
  return writer === undefined ? 'a writer without a lease' : `host ${writer.hostId} (epoch ${writer.epoch})`;
}
