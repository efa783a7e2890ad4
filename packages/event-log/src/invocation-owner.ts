/**
 * Who writes: the host id and epoch of the lease the writing log holds. A log without a
 * lease writes unstamped (`undefined`).
 */
export type WriterStamp = { readonly hostId: string; readonly epoch: number };

/** Who owns an invocation: the stamp of the writer that opened it or took it over. */
export type InvocationOwner = WriterStamp;

/**
 * The owner a takeover without a lease leaves behind. Its id cannot be registered (see
 * `checkHostId`), so no live writer ever matches it: the stale owner stays fenced.
 */
export const RECOVERED_OWNER: InvocationOwner = { hostId: '(recovered)', epoch: 0 };

/** What a takeover needs to know about a host's lease, read in the write transaction. */
export type HostLeaseState =
  | {
      readonly valid: true;
      readonly epoch: number;
      readonly expiresAt: number;
    }
  | { readonly valid: false; readonly reason: string };

/** The database's clock and the leases of the owners a batch's takeovers name. */
export type LeaseView = {
  readonly now: number;
  readonly hosts: ReadonlyMap<string, HostLeaseState>;
  /**
   * The writer's own lease is not in `hosts`: the store checks it inside the
   * transaction's one message (`postgresLeaseCheck`), and refuses it as a whole.
   */
  readonly checkedByStore?: true;
};

/** True when `a` and `b` name the same host and epoch. */
export function sameOwner(a: WriterStamp | null | undefined, b: WriterStamp | null | undefined): boolean {
  return a != null && b != null && a.hostId === b.hostId && a.epoch === b.epoch;
}

const hostIdPattern = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;

/** Throws unless `hostId` is one a host may register under. */
export function checkHostId(hostId: string): void {
  if (!hostIdPattern.test(hostId)) {
    throw new TypeError(
      `host id ${JSON.stringify(hostId.slice(0, 140))} is not valid: use 1 to 128 letters, digits, '.', '_', ':', '@' or '-', starting with a letter or digit`,
    );
  }
}

/**
 * Reads a stored host row as a lease, or says why it cannot be trusted. A row whose
 * expiry lies further ahead than its own time-to-live allows was not written by the
 * database's clock (a host that computed it from its own clock, or a hand edit): it is
 * invalid, and whatever it owns is left alone rather than ended.
 */
export function leaseOf(
  row: { epoch: unknown; ttl_ms: unknown; renewed_at: unknown; expires_at: unknown },
  now: number,
): HostLeaseState {
  const epoch = Number(row.epoch);
  const ttl = Number(row.ttl_ms);
  const renewed = Number(row.renewed_at);
  const expires = Number(row.expires_at);
  if (![epoch, ttl, renewed, expires].every(Number.isSafeInteger) || epoch < 1 || ttl < 1) {
    return { valid: false, reason: 'its epoch, time-to-live or times are not whole positive numbers' };
  }
  // A second of slack: the two clock readings of one statement may round apart.
  if (expires > renewed + ttl + 1000 || expires > now + ttl + 1000) {
    return {
      valid: false,
      reason: `its lease runs until ${new Date(expires).toISOString()}, further ahead than its time-to-live of ${ttl} ms allows by the database's clock`,
    };
  }
  return { valid: true, epoch, expiresAt: expires };
}
