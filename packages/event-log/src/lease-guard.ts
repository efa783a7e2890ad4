import { CompiledQuery } from 'kysely';
import {
  checkHostId,
  type HostLeaseState,
  type LeaseView,
  leaseOf,
  type WriterStamp,
} from './invocation-owner.js';

/** Marks a statement that `runPipelined` holds back and sends with `COMMIT`. */
export const HELD_WITH_COMMIT = '/* held with commit */';

/**
 * PostgreSQL: the rules read the writer's lease in the transaction, but a network that
 * holds the batch's last message (its writes and `COMMIT`) could deliver it after the
 * lease expired. This statement travels in that very message, before `COMMIT`, and
 * divides by zero — failing the transaction, so nothing of it is kept — unless the
 * writer's lease is live by `clock_timestamp()` as the message runs. Its values are
 * checked here, and written as literals (the message uses the simple protocol).
 */
export function postgresLeaseGuard(writer: WriterStamp): CompiledQuery {
  checkHostId(writer.hostId);
  if (!Number.isSafeInteger(writer.epoch)) throw new TypeError(`not an epoch: ${writer.epoch}`);
  return CompiledQuery.raw(
    `${HELD_WITH_COMMIT} select 1 / (select count(*)::int from hosts where host_id = '${writer.hostId}' and epoch = ${writer.epoch} and expires_at > (extract(epoch from clock_timestamp()) * 1000)::bigint) as live`,
  );
}

/** The SQLSTATE `postgresLeaseCheck` raises (class `QL`: no PostgreSQL class uses it). */
export const LEASE_REFUSED = 'QL001';

/**
 * PostgreSQL, a batch sent as one message (see `oneTripOpening`): the rules could not
 * read the writer's lease under the lock, so this statement — sent with `COMMIT`, after
 * the batch's writes — checks all the rules would have: a row for `writer.hostId` of
 * `writer.epoch`, whole positive numbers, a lease no further ahead than its time-to-live
 * allows (a row from the future is not trusted: the same second of slack as `leaseOf`),
 * and live. `clock_timestamp()`, not `statement_timestamp()`: in a message of several
 * statements the latter is the message's arrival, before the wait for the chain's lock;
 * the former is the moment the check runs, after it. Otherwise it raises `LEASE_REFUSED`,
 * failing the transaction (nothing of it is kept), with the row and the clock as JSON in
 * the error's detail, so the rules can refuse the batch's writes as the two-trip path
 * does (`leaseRefusal`).
 */
export function postgresLeaseCheck(writer: WriterStamp): CompiledQuery {
  checkHostId(writer.hostId);
  if (!Number.isSafeInteger(writer.epoch)) throw new TypeError(`not an epoch: ${writer.epoch}`);
  const host = `'${writer.hostId}'`;
  return CompiledQuery.raw(
    [
      `${HELD_WITH_COMMIT} do $$ declare n bigint := (extract(epoch from clock_timestamp()) * 1000)::bigint; j json; live boolean; begin`,
      `select json_build_object('epoch', h.epoch::text, 'ttl_ms', h.ttl_ms::text, 'renewed_at', h.renewed_at::text, 'expires_at', h.expires_at::text),`,
      `h.epoch = ${writer.epoch} and h.epoch >= 1 and h.ttl_ms >= 1 and h.expires_at > n`,
      'and h.expires_at <= h.renewed_at + h.ttl_ms + 1000 and h.expires_at <= n + h.ttl_ms + 1000',
      `into j, live from hosts h where h.host_id = ${host};`,
      'if not coalesce(live, false) then',
      `raise exception 'the writer''s lease allows no new work' using errcode = '${LEASE_REFUSED}',`,
      `detail = json_build_object('now', n::text, 'hostId', ${host}, 'row', j)::text;`,
      'end if; end $$',
    ].join(' '),
  );
}

/**
 * The lease `postgresLeaseCheck` refused, as the rules see leases (`LeaseView`); or
 * `undefined` when `error` is not its refusal.
 */
export function leaseRefusal(error: unknown): LeaseView | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, detail } = error as { code?: unknown; detail?: unknown };
  if (code !== LEASE_REFUSED || typeof detail !== 'string') return undefined;
  let parsed: { now?: unknown; hostId?: unknown; row?: Record<string, unknown> | null };
  try {
    parsed = JSON.parse(detail) as typeof parsed;
  } catch {
    return undefined;
  }
  const now = Number(parsed.now);
  if (!Number.isSafeInteger(now) || typeof parsed.hostId !== 'string') return undefined;
  const hosts = new Map<string, HostLeaseState>();
  const row = parsed.row;
  if (row) {
    hosts.set(
      parsed.hostId,
      leaseOf(
        { epoch: row.epoch, ttl_ms: row.ttl_ms, renewed_at: row.renewed_at, expires_at: row.expires_at },
        now,
      ),
    );
  }
  return { now, hosts };
}
