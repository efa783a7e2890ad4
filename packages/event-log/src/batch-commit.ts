import { CommitError, chainLink, contentDigest } from '@factum/agent-facts';
import type { Kysely } from 'kysely';
import { AppendRefusedError } from './append-refused-error.js';
import { checkWrite, type RuleEffects } from './append-rules.js';
import { type AcceptedWrite, insertEvents } from './insert-events.js';
import { loadRuleState } from './load-rule-state.js';
import type { LogDialect } from './log-dialect.js';
import type { LogDatabase } from './log-schema.js';
import type { CommitHooks, PendingWrite } from './pending-write.js';
import { RuleCache } from './rule-cache.js';
import type { WalDurability } from './wal-durability.js';
import { writeRuleEffects } from './write-rule-effects.js';

/**
 * Commits a batch of writes in one transaction and one fsync. Each write is checked
 * against the rules in order (seeing the writes before it); a refused write is rejected
 * alone, the rest go on. If the transaction fails, every write in it is rejected — as
 * `outcome_unknown` when `COMMIT` or the WAL sync after it failed, since the store may
 * have kept it.
 */
export async function commitBatch(
  db: Kysely<LogDatabase>,
  context: {
    dialect: LogDialect;
    durability: WalDurability | undefined;
    cache: RuleCache;
    hooks: CommitHooks;
  },
  batch: readonly PendingWrite[],
): Promise<void> {
  const { dialect, durability, cache, hooks } = context;
  // Optional calls skip their arguments: without hooks, no id lists are built.
  hooks.batchStarted?.({ size: batch.length, eventIds: batch.map((pending) => pending.write.event.id) });
  let accepted: AcceptedWrite[] = [];
  let committing = false;
  try {
    await db.connection().execute(async (connection) => {
      // Several writes waiting: sync the WAL off the event loop (see WalDurability).
      await durability?.prepare(connection, batch.length > 1);
      for (const statement of dialect.begin) await connection.executeQuery(statement);
      try {
        const token = await dialect.changeToken(connection);
        if (token === undefined || token !== cache.token) cache.reset();
        cache.token = token;
        await loadRuleState(connection, cache, batch);
        accepted = applyRules(cache, batch);
        await insertEvents(connection, accepted, dialect.rowsPerInsert);
        await writeRuleEffects(connection, accepted);
        hooks.beforeCommit?.({
          size: accepted.length,
          eventIds: accepted.map((entry) => entry.row.event_id),
        });
        committing = true;
        await connection.executeQuery(dialect.commit);
      } catch (error) {
        if (!committing) await connection.executeQuery(dialect.rollback).catch(() => undefined);
        throw error;
      }
      // Still holding the connection: nobody in this process reads what is not yet durable.
      await durability?.settle();
    });
  } catch (error) {
    cache.reset();
    const failure = committing
      ? CommitError.outcomeUnknown('the log could not confirm the commit; the write may be durable', {
          cause: error,
        })
      : CommitError.rejected('the log transaction failed; nothing of this write was stored', {
          cause: error,
        });
    for (const { pending } of accepted) pending.reject(failure);
    for (const pending of batch)
      if (!accepted.some((entry) => entry.pending === pending)) pending.reject(failure);
    return;
  }
  cache.trim();
  hooks.afterCommit?.({ size: accepted.length, eventIds: accepted.map((entry) => entry.row.event_id) });
  for (const { pending, row } of accepted) {
    pending.resolve({ sequence: row.sequence, eventId: row.event_id, digest: row.digest });
  }
}

function applyRules(cache: RuleCache, batch: readonly PendingWrite[]): AcceptedWrite[] {
  const accepted: AcceptedWrite[] = [];
  for (const pending of batch) {
    let effects: RuleEffects;
    try {
      effects = checkWrite(pending.write, cache);
    } catch (error) {
      if (!AppendRefusedError.isInstance(error)) throw error;
      pending.reject(error);
      continue;
    }
    const { event } = pending.write;
    const session = cache.session(event.invocation.sessionId);
    const sequence = (cache.head?.sequence ?? 0) + 1;
    const bodyDigest = contentDigest(pending.body);
    const digest = chainLink(cache.head?.digest, bodyDigest);
    const sessionDigest = chainLink(session.head?.digest, bodyDigest);
    cache.head = { sequence, digest };
    session.head = { sequence, digest: sessionDigest };
    applyEffects(cache, pending, effects);
    accepted.push({
      pending,
      effects,
      row: {
        sequence,
        event_id: event.id,
        session_id: event.invocation.sessionId,
        invocation_id: event.invocation.invocationId,
        run_id: event.invocation.runId,
        kind: event.fact.kind,
        operation_id: 'operationId' in event.fact ? event.fact.operationId : null,
        body: pending.body,
        bytes: pending.bytes,
        digest,
        session_digest: sessionDigest,
      },
    });
  }
  return accepted;
}

function applyEffects(cache: RuleCache, pending: PendingWrite, effects: RuleEffects): void {
  const { invocation } = pending.write.event;
  const session = cache.session(invocation.sessionId);
  if (effects.openInvocation) {
    cache.invocations.set(RuleCache.key(invocation.sessionId, invocation.invocationId), {
      turnId: invocation.turnId,
      runId: invocation.runId,
      ended: false,
      terminal: null,
    });
    session.liveInvocationId = invocation.invocationId;
    session.heldForInvocationId = null;
  }
  if (effects.endInvocation) {
    const known = cache.invocation(invocation.sessionId, invocation.invocationId);
    if (known) {
      known.ended = true;
      known.terminal = effects.endInvocation.terminal;
    }
    session.liveInvocationId = null;
    session.heldForInvocationId = effects.endInvocation.heldFor;
  }
  const operation = effects.dispatch ?? effects.reject;
  if (operation) {
    cache.operations.set(RuleCache.key(invocation.sessionId, operation.operationId), {
      invocationId: invocation.invocationId,
      parentOperationId: effects.dispatch?.parentOperationId ?? null,
      state: effects.dispatch ? 'dispatched' : 'rejected',
    });
  }
  if (effects.close) {
    const known = cache.operation(invocation.sessionId, effects.close.operationId);
    if (known) known.state = 'closed';
  }
}
