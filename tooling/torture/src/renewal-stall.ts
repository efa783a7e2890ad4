import type { FleetHost } from './fleet-round.js';

/**
 * How many times-to-live a survivor may go without renewing its lease before the gap is
 * a defect, not load. A host starved of CPU on a loaded machine lapses by a second or
 * two (the longest gaps measured with two fleet runs and a busy loop on two cores were
 * 3.0 s under a 2 s TTL); a host whose event loop waits on a lock another part of it
 * holds stalls for the store's whole busy timeout (10 s), which this bound catches.
 */
export const STALL_TTLS = 4;

/**
 * Why a survivor's renewals count as stalled, or undefined when they do not: a running,
 * unpaused host that went `STALL_TTLS` times its TTL without a renewal. A paused host's
 * gap is the pause, and one that did not stop by itself said no gap.
 */
export function stalledRenewal(
  host: Pick<FleetHost, 'id' | 'role' | 'paused' | 'renewGapMs'>,
  ttlMs: number,
): string | undefined {
  if (host.role !== 'survivor' || host.paused || host.renewGapMs === undefined) return undefined;
  if (host.renewGapMs < STALL_TTLS * ttlMs) return undefined;
  return `${host.id} went ${Math.round(host.renewGapMs)} ms without renewing its lease (TTL ${ttlMs} ms): more than ${STALL_TTLS} TTLs is not load, something held its event loop or the store's lock`;
}
