import type { Invocation } from '@factum/agent-facts';
import type { Kysely } from 'kysely';
import { type HostStatus, readHosts } from './lease-queries.js';
import type { LogDatabase } from './log-schema.js';

/**
 * Who owns an invocation and whether its lease is live, by the database's clock:
 * - `live`: its owner holds the lease (until `liveUntil`): recovery leaves it alone;
 * - `expired`: its owner's lease ran out, was released, or belongs to an earlier epoch
 *   of the host id: recovery may take it over;
 * - `unowned`: opened without a lease: recovery may end it, as before leases;
 * - `invalid`: its owner's host row cannot be trusted (`reason`): left alone.
 */
export type InvocationOwnership = {
  readonly lease: 'live' | 'expired' | 'unowned' | 'invalid';
  readonly owner?: {
    readonly hostId: string;
    readonly epoch: number;
    readonly pid?: number;
    readonly hostname?: string;
  };
  /** When the owner's lease runs out (ISO 8601, the database's clock), while live. */
  readonly liveUntil?: string;
  readonly reason?: string;
};

/** An invocation with no `invocation_ended`, and who owns it. */
export type UnfinishedInvocation = {
  readonly invocation: Invocation;
  readonly ownership: InvocationOwnership;
};

type OwnerRow = {
  session_id: string;
  turn_id: string;
  run_id: string;
  invocation_id: string;
  owner_host_id: string | null;
  owner_epoch: number | null;
};

const columns = ['session_id', 'turn_id', 'run_id', 'invocation_id', 'owner_host_id', 'owner_epoch'] as const;

/** Unfinished invocations, oldest first, each with its owner and lease. */
export async function unfinishedWithOwners(
  db: Kysely<LogDatabase>,
  dialect: 'sqlite' | 'postgres',
  limit: number,
): Promise<UnfinishedInvocation[]> {
  const rows = await db
    .selectFrom('invocations')
    .select(columns)
    // Live exactly until its end: read through the index that keeps one live per session.
    .where('live', '=', 1)
    .orderBy('opened_sequence', 'asc')
    .limit(limit)
    .execute();
  return withOwners(db, dialect, rows);
}

/** One invocation's owner and lease; `undefined` if the log has no such invocation. */
export async function ownershipOf(
  db: Kysely<LogDatabase>,
  dialect: 'sqlite' | 'postgres',
  invocation: Invocation,
): Promise<InvocationOwnership | undefined> {
  const rows = await db
    .selectFrom('invocations')
    .select(columns)
    .where('session_id', '=', invocation.sessionId)
    .where('invocation_id', '=', invocation.invocationId)
    .execute();
  return (await withOwners(db, dialect, rows))[0]?.ownership;
}

async function withOwners(
  db: Kysely<LogDatabase>,
  dialect: 'sqlite' | 'postgres',
  rows: readonly OwnerRow[],
): Promise<UnfinishedInvocation[]> {
  const ids = rows.flatMap((row) => (row.owner_host_id === null ? [] : [row.owner_host_id]));
  const { now, hosts } = await readHosts(db, dialect, ids);
  return rows.map((row) => ({
    invocation: {
      sessionId: row.session_id,
      turnId: row.turn_id,
      runId: row.run_id,
      invocationId: row.invocation_id,
    },
    ownership:
      row.owner_host_id === null
        ? { lease: 'unowned' }
        : judge(row.owner_host_id, Number(row.owner_epoch), hosts.get(row.owner_host_id), now),
  }));
}

function judge(
  hostId: string,
  epoch: number,
  host: HostStatus | undefined,
  now: number,
): InvocationOwnership {
  const owner =
    host === undefined || host.epoch !== epoch
      ? { hostId, epoch }
      : {
          hostId,
          epoch,
          ...(host.pid === undefined ? {} : { pid: host.pid }),
          ...(host.hostname === undefined ? {} : { hostname: host.hostname }),
        };
  if (host === undefined) return { lease: 'expired', owner, reason: 'the host has no row' };
  if (!host.lease.valid) return { lease: 'invalid', owner, reason: host.lease.reason };
  if (host.lease.epoch !== epoch) {
    return { lease: 'expired', owner, reason: `the host registered again (epoch ${host.lease.epoch})` };
  }
  if (host.lease.expiresAt <= now) return { lease: 'expired', owner };
  return { lease: 'live', owner, liveUntil: new Date(host.lease.expiresAt).toISOString() };
}
