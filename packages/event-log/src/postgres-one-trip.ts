import { CompiledQuery } from 'kysely';
import { HELD_WITH_COMMIT } from './lease-guard.js';
import { quote } from './postgres-literal.js';
import type { ChainHead } from './rule-cache.js';

/**
 * Marks the opening of a one-message transaction: it has no `BEGIN`, so it must reach
 * the server in the same message as its `COMMIT` (`runPipelined` refuses to split it).
 */
export const ONE_MESSAGE = '/* one message */';

/** The SQLSTATE the head guard raises (class `QH`: no PostgreSQL class uses it). */
export const HEAD_MOVED = 'QH001';

/** The SQLSTATE `freshSessionsGuard` raises. */
export const SESSION_NOT_NEW = 'QH002';

/**
 * The statement that opens a one-trip transaction (see `oneTripFits`): the chain's lock,
 * and a guard that fails the transaction with `HEAD_MOVED` unless the chain's last event
 * is still `head`. There is no `BEGIN`: the statements of one simple-query message are
 * one implicit transaction, which the server rolls back by itself, its lock released,
 * the moment one of them fails (a moved head, a refused lease, a key taken) — without
 * waiting for the client's `ROLLBACK`, which a stalled network could hold. The `COMMIT`
 * the message ends with commits that implicit transaction (the server warns that no
 * transaction was begun, and commits). Every write moves the head, so an unmoved head
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
  return CompiledQuery.raw(
    `${HELD_WITH_COMMIT} ${ONE_MESSAGE} select pg_advisory_xact_lock(${chainLock}); ${guard}`,
  );
}

/**
 * The guard of the sessions a one-message batch took for new (see `oneTripFits`): fails
 * the transaction with `SESSION_NOT_NEW` if the log holds any fact or admission row of
 * one of them. Held like a write and sent with `COMMIT`, after the chain's lock. The ids
 * are the callers' strings: they are written as quoted literals, so the tables' indexes
 * find them, inside a block whose dollar-quote tag none of them contains.
 */
export function freshSessionsGuard(sessionIds: readonly string[]): CompiledQuery {
  if (sessionIds.length === 0) throw new TypeError('no session to check');
  let tag = '$fresh$';
  while (sessionIds.some((id) => id.includes(tag))) tag = `${tag.slice(0, -1)}x$`;
  const ids = sessionIds.map(quote).join(', ');
  const guard = [
    `do ${tag} begin`,
    `if exists (select 1 from events where session_id in (${ids}))`,
    `or exists (select 1 from sessions where session_id in (${ids})) then`,
    `raise exception 'a session taken for new holds facts: another writer wrote to it' using errcode = '${SESSION_NOT_NEW}';`,
    `end if; end ${tag}`,
  ].join(' ');
  return CompiledQuery.raw(`${HELD_WITH_COMMIT} ${guard}`);
}

/** Whether a transaction failed on the head guard: nothing of it was kept. */
export function headMoved(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === HEAD_MOVED;
}
