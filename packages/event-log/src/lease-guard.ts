import { CompiledQuery } from 'kysely';
import { checkHostId, type WriterStamp } from './invocation-owner.js';

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
