import { type Kysely, type RawBuilder, sql } from 'kysely';
import { EventLogError } from './event-log-error.js';
import { type HostLeaseState, leaseOf, type WriterStamp } from './invocation-owner.js';
import type { LogDatabase } from './log-schema.js';

type Dialect = 'sqlite' | 'postgres';

/** The database's clock in milliseconds: every lease time is written and compared by it. */
function now(dialect: Dialect): RawBuilder<number> {
  return dialect === 'sqlite'
    ? sql<number>`cast((julianday('now') - 2440587.5) * 86400000 as integer)`
    : sql<number>`(extract(epoch from statement_timestamp()) * 1000)::bigint`;
}

/** Reads the database's clock (see `now`), in milliseconds since the epoch. */
export async function databaseNow(db: Kysely<LogDatabase>, dialect: Dialect): Promise<number> {
  try {
    const clock = await sql<{ now: number }>`select ${now(dialect)} as now`.execute(db);
    return Number(clock.rows[0]?.now);
  } catch (error) {
    if (EventLogError.isInstance(error)) throw error;
    throw new EventLogError('store_unreachable', `cannot read the database's clock: ${String(error)}`, {
      cause: error,
    });
  }
}

/** What a host says about itself when it registers. */
export type HostInfo = {
  readonly hostId: string;
  readonly pid: number;
  readonly hostname: string;
  readonly startedAt: string;
  readonly ttlMs: number;
};

/**
 * Registers `info.hostId` with a new epoch (1, or one past the last registration of
 * that id: a restarted host's earlier epoch is dead at once) and a lease of `ttlMs`
 * from the database's clock. A stored row that cannot be trusted is not overwritten:
 * `corrupt_row` says which.
 */
export async function registerHost(
  db: Kysely<LogDatabase>,
  dialect: Dialect,
  info: HostInfo,
): Promise<{ epoch: number; expiresAt: number }> {
  // The check reads, then one statement writes: no read-then-write transaction, which
  // SQLite may refuse at once (a stale snapshot) when another process registers beside it.
  const existing = await db
    .selectFrom('hosts')
    .selectAll()
    .where('host_id', '=', info.hostId)
    .executeTakeFirst();
  if (existing !== undefined) {
    const clock = await sql<{ now: number }>`select ${now(dialect)} as now`.execute(db);
    const lease = leaseOf(existing, Number(clock.rows[0]?.now));
    if (!lease.valid) {
      throw new EventLogError(
        'corrupt_row',
        `the row of host ${info.hostId} cannot be trusted (${lease.reason}): delete it, or register under another host id`,
      );
    }
  }
  const values = {
    host_id: info.hostId,
    epoch: 1,
    pid: info.pid,
    hostname: info.hostname,
    started_at: info.startedAt,
    ttl_ms: info.ttlMs,
    renewed_at: now(dialect),
    expires_at: sql<number>`${now(dialect)} + ${info.ttlMs}`,
  };
  // The epoch moves in the same statement, so two registrations of one id never share one.
  const row = await db
    .insertInto('hosts')
    .values(values)
    .onConflict((conflict) =>
      conflict.column('host_id').doUpdateSet({ ...values, epoch: sql<number>`hosts.epoch + 1` }),
    )
    .returning(['epoch', 'expires_at'])
    .executeTakeFirstOrThrow();
  return { epoch: Number(row.epoch), expiresAt: Number(row.expires_at) };
}

/**
 * Extends the lease of `stamp` by `ttlMs` from the database's clock, if it is still
 * that epoch's and has not expired; `undefined` when it is lost (it expired, or the
 * host id registered again).
 */
export async function renewLease(
  db: Kysely<LogDatabase>,
  dialect: Dialect,
  stamp: WriterStamp,
  ttlMs: number,
): Promise<number | undefined> {
  const row = await db
    .updateTable('hosts')
    .set({ renewed_at: now(dialect), expires_at: sql<number>`${now(dialect)} + ${ttlMs}`, ttl_ms: ttlMs })
    .where('host_id', '=', stamp.hostId)
    .where('epoch', '=', stamp.epoch)
    .where('expires_at', '>', now(dialect))
    .returning('expires_at')
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.expires_at);
}

/** Ends the lease of `stamp` now: what it still owns may be recovered at once. */
export async function releaseLease(db: Kysely<LogDatabase>, stamp: WriterStamp): Promise<void> {
  await db
    .updateTable('hosts')
    .set({ expires_at: 0, renewed_at: 0 })
    .where('host_id', '=', stamp.hostId)
    .where('epoch', '=', stamp.epoch)
    .execute();
}

/** A host as recovery reports it: who, and whether (and until when) its lease is live. */
export type HostStatus = {
  readonly hostId: string;
  readonly epoch: number;
  readonly pid?: number;
  readonly hostname?: string;
  readonly startedAt?: string;
  readonly lease: HostLeaseState;
};

/** The hosts named by `hostIds`, as the database's clock sees them now. */
export async function readHosts(
  db: Kysely<LogDatabase>,
  dialect: Dialect,
  hostIds: readonly string[],
): Promise<{ now: number; hosts: Map<string, HostStatus> }> {
  const clock = await sql<{ now: number }>`select ${now(dialect)} as now`.execute(db);
  const at = Number(clock.rows[0]?.now);
  const hosts = new Map<string, HostStatus>();
  if (hostIds.length === 0) return { now: at, hosts };
  const rows = await db
    .selectFrom('hosts')
    .selectAll()
    .where('host_id', 'in', [...new Set(hostIds)])
    .execute();
  for (const row of rows) {
    hosts.set(row.host_id, {
      hostId: row.host_id,
      epoch: Number(row.epoch),
      pid: Number(row.pid),
      hostname: String(row.hostname),
      startedAt: String(row.started_at),
      lease: leaseOf(row, at),
    });
  }
  return { now: at, hosts };
}
