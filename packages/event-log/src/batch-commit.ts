import { CommitError, chainDigest } from '@factum/agent-facts';
import { CompiledQuery, type Kysely } from 'kysely';
import { AppendRefusedError } from './append-refused-error.js';
import { checkWrite, type RuleEffects } from './append-rules.js';
import { loadRuleState } from './load-rule-state.js';
import type { LogDialect } from './log-dialect.js';
import type { EventsTable, LogDatabase } from './log-schema.js';
import type { CommitHooks, PendingWrite } from './pending-write.js';
import { RuleCache } from './rule-cache.js';
import { writeRuleEffects } from './write-rule-effects.js';

type Accepted = { pending: PendingWrite; row: EventsTable; effects: RuleEffects };

/**
 * Commits a batch of writes in one transaction and one fsync. Each write is checked
 * against the rules in order (seeing the writes before it); a refused write is rejected
 * alone, the rest go on. If the transaction fails, every write in it is rejected — as
 * `outcome_unknown` when `COMMIT` itself failed, since the store may have kept it.
 */
export async function commitBatch(
  db: Kysely<LogDatabase>,
  context: {
    dialect: LogDialect;
    durable: (() => Promise<void>) | undefined;
    cache: RuleCache;
    hooks: CommitHooks;
  },
  batch: readonly PendingWrite[],
): Promise<void> {
  const { dialect, durable, cache, hooks } = context;
  // Optional calls skip their arguments: without hooks, no id lists are built.
  hooks.batchStarted?.({ size: batch.length, eventIds: batch.map((pending) => pending.write.event.id) });
  let accepted: Accepted[] = [];
  let committing = false;
  try {
    await db.connection().execute(async (connection) => {
      for (const statement of dialect.begin) await connection.executeQuery(statement);
      try {
        const token = await dialect.changeToken(connection);
        if (token === undefined || token !== cache.token) cache.reset();
        cache.token = token;
        await loadRuleState(connection, cache, batch);
        accepted = applyRules(cache, batch);
        await insertRows(connection, accepted);
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
      await durable?.();
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

function applyRules(cache: RuleCache, batch: readonly PendingWrite[]): Accepted[] {
  const accepted: Accepted[] = [];
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
    const digest = chainDigest(cache.head?.digest, pending.body);
    const sessionDigest = chainDigest(session.head?.digest, pending.body);
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

const eventColumns = [
  'sequence',
  'event_id',
  'session_id',
  'invocation_id',
  'run_id',
  'kind',
  'operation_id',
  'body',
  'bytes',
  'digest',
  'session_digest',
] as const satisfies readonly (keyof EventsTable)[];
const compiledInserts = new Map<string, string>();

/**
 * The events insert for `rows` rows, built by Kysely once per (dialect, row count) and
 * reused: compiling the query costs more than SQLite spends running it.
 */
function insertEventsSql(db: Kysely<LogDatabase>, rows: number): string {
  const key = `${db.getExecutor().adapter.constructor.name}:${rows}`;
  let text = compiledInserts.get(key);
  if (text === undefined) {
    const template = Object.fromEntries(
      eventColumns.map((column) => [column, null]),
    ) as unknown as EventsTable;
    text = db
      .insertInto('events')
      .values(Array.from({ length: rows }, () => template))
      .compile().sql;
    compiledInserts.set(key, text);
  }
  return text;
}

async function insertRows(db: Kysely<LogDatabase>, accepted: readonly Accepted[]): Promise<void> {
  for (let start = 0; start < accepted.length; start += 500) {
    const chunk = accepted.slice(start, start + 500);
    const parameters = chunk.flatMap(({ row }) => eventColumns.map((column) => row[column]));
    await db.executeQuery(CompiledQuery.raw(insertEventsSql(db, chunk.length), parameters));
  }
  const results = accepted.filter((entry) => entry.pending.write.result !== undefined);
  if (results.length > 0) {
    await db
      .insertInto('tool_results')
      .values(
        results.map(({ pending, row }) => {
          const result = pending.write.result!;
          return {
            event_id: row.event_id,
            session_id: row.session_id,
            digest: result.reference().digest,
            body: result.text(),
          };
        }),
      )
      .execute();
  }
}
