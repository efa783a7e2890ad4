import { CompiledQuery } from 'kysely';
import { HELD_WITH_COMMIT } from './lease-guard.js';
import type { ChainHead } from './rule-cache.js';

/** The SQLSTATE the head guard raises (class `QH`: no PostgreSQL class uses it). */
export const HEAD_MOVED = 'QH001';

/**
 * The statement that opens a one-trip transaction (see `oneTripFits`): `BEGIN`, the
 * chain's lock, and a guard that fails the transaction with `HEAD_MOVED` unless the
 * chain's last event is still `head`. Every write moves the head, so an unmoved head
 * means no other writer changed anything the cached rules read. The guard runs after
 * the lock is granted and takes its own snapshot (read committed), so it sees the last
 * holder's commit. Marked to be held by `runPipelined` and sent with `COMMIT`.
 */
export function oneTripOpening(head: ChainHead, chainLock: number): CompiledQuery {
  if (!Number.isSafeInteger(head.sequence) || head.sequence < 0) {
    throw new TypeError(`not a sequence: ${head.sequence}`);
  }
  if (!/^[a-z0-9:]*$/.test(head.digest)) throw new TypeError('not a chain digest');
  const guard = [
    'do $$ declare s bigint; d text; begin',
    'select e.sequence, e.digest into s, d from events e order by e.sequence desc limit 1;',
    `if coalesce(s, 0) <> ${head.sequence} or coalesce(d, '') <> '${head.digest}' then`,
    `raise exception 'the chain''s head moved: another writer committed' using errcode = '${HEAD_MOVED}';`,
    'end if; end $$',
  ].join(' ');
  return CompiledQuery.raw(`${HELD_WITH_COMMIT} begin; select pg_advisory_xact_lock(${chainLock}); ${guard}`);
}

/** Whether a transaction failed on the head guard: nothing of it was kept. */
export function headMoved(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === HEAD_MOVED;
}
