import type { InvocationOwnership } from '@factum/event-log';

/**
 * Says who runs an unfinished invocation, in one phrase: "running on host H (pid P on
 * M), lease live until T", or why recovery may end it, or why it leaves it alone.
 */
export function ownershipText(ownership: InvocationOwnership | undefined): string {
  if (ownership === undefined || ownership.lease === 'unowned') return 'no owner recorded: recoverable';
  const owner = ownership.owner!;
  const where = owner.pid === undefined ? '' : ` (pid ${owner.pid} on ${owner.hostname ?? 'unknown'})`;
  const host = `host ${owner.hostId}${where}`;
  switch (ownership.lease) {
    case 'live':
      return `running on ${host}, lease live until ${ownership.liveUntil}: left alone`;
    case 'expired':
      return `${host} is gone (lease expired${ownership.reason ? `: ${ownership.reason}` : ''}): recoverable`;
    case 'invalid':
      return `the row of ${host} cannot be trusted (${ownership.reason}): left alone, fix the row by hand`;
    default:
      return ownership.lease satisfies never;
  }
}
