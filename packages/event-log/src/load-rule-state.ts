import { type CompiledQuery, type Kysely, sql } from 'kysely';
import type { OperationState } from './append-rules.js';
import { needsClock } from './approval-rules.js';
import { type HostLeaseState, type LeaseView, leaseOf } from './invocation-owner.js';
import { loadForkSources } from './load-fork-sources.js';
import { run, type Statements } from './log-dialect.js';
import { EMPTY_DIGEST } from './log-prefix.js';
import type { LogDatabase } from './log-schema.js';
import { RuleCache } from './rule-cache.js';
import type { StagedWrite } from './staged-write.js';
import { slots, templated } from './statement-templates.js';
import { startsLeasedWork } from './writer-lease-rule.js';

/**
 * Reads into the cache whatever the batch's rules need and the cache lacks: the chain
 * heads, the sessions, invocations and operations the writes name. Runs inside the
 * write transaction, so what it reads cannot change before the batch commits. A batch
 * with takeovers also reads the database's clock and its owners' leases, never cached:
 * whether a lease is live is decided at the moment of the takeover.
 */
export function* loadRuleState(
  builder: Kysely<LogDatabase>,
  context: { readonly cache: RuleCache; readonly clock: CompiledQuery<{ now: number }> },
  batch: readonly StagedWrite[],
): Statements<LeaseView | undefined> {
  const { cache } = context;
  // A busy log's batches mostly name what the cache holds already: nothing to read.
  if (batch.every((staged) => ruleStateCached(cache, staged))) return undefined;
  if (cache.head === undefined) {
    const [last] = yield* run(
      builder
        .selectFrom('events')
        .select(['sequence', 'digest'])
        .orderBy('sequence', 'desc')
        .limit(1)
        .compile(),
    );
    cache.head = last
      ? { sequence: Number(last.sequence), digest: last.digest }
      : { sequence: 0, digest: '' };
  }
  const sessions = new Set<string>();
  const invocations = new Map<string, { sessionId: string; invocationId: string }>();
  const operations = new Map<string, { sessionId: string; operationId: string }>();
  const submissions = new Map<string, { sessionId: string; key: string }>();
  for (const { event } of batch) {
    const { sessionId, invocationId } = event.invocation;
    if (!cache.sessions.has(sessionId)) sessions.add(sessionId);
    const invocationKey = RuleCache.key(sessionId, invocationId);
    if (!cache.invocations.has(invocationKey)) invocations.set(invocationKey, { sessionId, invocationId });
    const key = event.fact.kind === 'invocation_opened' ? event.fact.idempotencyKey : undefined;
    if (key !== undefined && !cache.submissions.has(RuleCache.key(sessionId, key))) {
      submissions.set(RuleCache.key(sessionId, key), { sessionId, key });
    }
    for (const operationId of operationIdsOf(event.fact)) {
      const key = RuleCache.key(sessionId, operationId);
      if (!cache.operations.has(key)) operations.set(key, { sessionId, operationId });
    }
  }
  yield* loadSessions(builder, cache, [...sessions]);
  yield* loadInvocations(builder, cache, [...invocations.values()]);
  yield* loadOperations(builder, cache, [...operations.values()]);
  yield* loadSubmissions(builder, cache, [...submissions.values()]);
  yield* loadAttempts(builder, cache, batch);
  yield* loadForkSources(builder, cache, batch);
  // An expiry is checked against the same clock, read in the same transaction.
  // So is a writer's own lease, for a write that starts a run or an effect.
  if (!batch.some((staged) => staged.takeover || needsClock(staged.event.fact) || startsLeasedWork(staged))) {
    return undefined;
  }
  return yield* loadLeases(builder, context, batch);
}

/**
 * Whether the cache already holds everything the rules read to judge `staged`: the
 * chain's head, its session, its invocation and the operations it names. A takeover
 * or a write judged by the clock reads the leases and the clock, never cached; so does a
 * write that starts leased work, unless `inMessage`: the batch goes as one message whose
 * statements check the writer's lease (`postgresLeaseCheck`) and whose inserts fail on
 * the tables' keys if an opening's invocation or a dispatch's operation the cache lacks
 * is not new after all.
 */
export function ruleStateCached(
  cache: RuleCache,
  staged: StagedWrite,
  {
    inMessage = false,
    opened,
    fresh,
  }: {
    readonly inMessage?: boolean;
    readonly opened?: Set<string>;
    readonly fresh?: Set<string>;
  } = {},
): boolean {
  const { event } = staged;
  const { sessionId, invocationId } = event.invocation;
  if (staged.takeover || needsClock(event.fact) || event.fact.kind === 'tool_redispatched') return false;
  // A fork's boundary is read in the transaction that writes it, never from the cache.
  if (event.fact.kind === 'session_forked') return false;
  // Unless the store checks the writer's lease in the transaction's one message.
  if (startsLeasedWork(staged) && !inMessage) return false;
  if (cache.head === undefined) return false;
  if (!cache.sessions.has(sessionId) && fresh?.has(sessionId) !== true) {
    // In one message, a session the cache does not know is taken for new when its
    // writer built the group on its empty history: the store checks that it holds no
    // fact of it (`LogDialect.freshSessions`), and the batch runs again, read, if it does.
    if (!(inMessage && fresh !== undefined && builtOnEmptySession(staged))) return false;
    fresh.add(sessionId);
  }
  // In one message, an opening the cache does not know is taken for new: the table's
  // key refuses it if it is not (`LogDialect.assumedNew`), and the batch runs again.
  // So are the later writes of that invocation in the same batch (`opened` collects
  // such openings as a batch is judged): the rules see the opening's effect in the cache.
  const opening = inMessage && event.fact.kind === 'invocation_opened';
  const key = RuleCache.key(sessionId, invocationId);
  if (!opening && !cache.invocations.has(key) && opened?.has(key) !== true) return false;
  // A key not yet taken is not cached: an opening with one is judged on what the store holds.
  if (event.fact.kind === 'invocation_opened' && event.fact.idempotencyKey !== undefined) return false;
  if (opening) opened?.add(key);
  // So is the operation a dispatch starts (never its parent).
  const dispatched = inMessage && event.fact.kind === 'tool_dispatched' ? event.fact.operationId : undefined;
  return operationIdsOf(event.fact).every(
    (id, index) => (index === 0 && id === dispatched) || cache.operations.has(RuleCache.key(sessionId, id)),
  );
}

/** An opening (with no submitter's key) of a group conditional on an empty session. */
function builtOnEmptySession(staged: StagedWrite): boolean {
  const { fact } = staged.event;
  const head = staged.onHead;
  return (
    fact.kind === 'invocation_opened' &&
    fact.idempotencyKey === undefined &&
    head !== undefined &&
    head.highWater === 0 &&
    head.digest === EMPTY_DIGEST
  );
}

function* loadLeases(
  builder: Kysely<LogDatabase>,
  context: { readonly cache: RuleCache; readonly clock: CompiledQuery<{ now: number }> },
  batch: readonly StagedWrite[],
): Statements<LeaseView> {
  const owners = new Set<string>();
  for (const staged of batch) {
    const { event, takeover } = staged;
    if (startsLeasedWork(staged)) owners.add(staged.writer!.hostId);
    if (!takeover) continue;
    const owner = context.cache.invocation(event.invocation.sessionId, event.invocation.invocationId)?.owner;
    if (owner) owners.add(owner.hostId);
  }
  const hosts = new Map<string, HostLeaseState>();
  if (owners.size === 0) {
    const [clock] = yield* run(context.clock);
    return { now: Number(clock?.now), hosts };
  }
  // The clock and the rows in one statement: on PostgreSQL each is a round trip taken
  // while the chain's lock is held, and every T1 batch reads its writer's lease.
  const build = () =>
    builder
      .selectFrom(sql<{ now: number }>`(${sql.raw(context.clock.sql)})`.as('clock'))
      .leftJoin('hosts', (join) => join.on('hosts.host_id', 'in', slots(0, owners.size)))
      .select([
        'clock.now',
        'hosts.host_id',
        'hosts.epoch',
        'hosts.ttl_ms',
        'hosts.renewed_at',
        'hosts.expires_at',
      ])
      .compile();
  const key = `leases.${owners.size}.${context.clock.sql}`;
  const rows = yield* run(templated(builder, key, build, [...owners]));
  const now = Number(rows[0]?.now);
  for (const row of rows) if (row.host_id !== null) hosts.set(row.host_id, leaseOf(row, now));
  return { now, hosts };
}

/**
 * The last attempt of each operation a re-dispatch names: 1 plus its
 * `tool_redispatched` events, which the rules accept only in order. Read only for
 * batches that carry one, so a dispatch costs no more.
 */
function* loadAttempts(
  builder: Kysely<LogDatabase>,
  cache: RuleCache,
  batch: readonly StagedWrite[],
): Statements<void> {
  const wanted = new Map<string, { sessionId: string; operationId: string }>();
  for (const { event } of batch) {
    const { fact, invocation } = event;
    if (fact.kind !== 'tool_redispatched') continue;
    const key = RuleCache.key(invocation.sessionId, fact.operationId);
    if (cache.operations.get(key)?.attempt === undefined) {
      wanted.set(key, { sessionId: invocation.sessionId, operationId: fact.operationId });
    }
  }
  if (wanted.size === 0) return;
  const keys = [...wanted.values()];
  const rows = yield* run(
    builder
      .selectFrom('events')
      .select((eb) => ['session_id', 'operation_id', eb.fn.countAll().as('redispatches')])
      .where('kind', '=', 'tool_redispatched')
      .where('session_id', 'in', unique(keys.map((key) => key.sessionId)))
      .where('operation_id', 'in', unique(keys.map((key) => key.operationId)))
      .groupBy(['session_id', 'operation_id'])
      .compile(),
  );
  const counts = new Map(rows.map((row) => [RuleCache.key(row.session_id, row.operation_id ?? ''), row]));
  for (const [key] of wanted) {
    const operation = cache.operations.get(key);
    if (operation !== undefined) operation.attempt = 1 + Number(counts.get(key)?.redispatches ?? 0);
  }
}

function operationIdsOf(fact: StagedWrite['event']['fact']): string[] {
  if (fact.kind === 'invocation_ended' && fact.outcome.kind === 'approval_pending') {
    return fact.outcome.operations;
  }
  if (!('operationId' in fact)) return [];
  if (fact.kind === 'tool_dispatched' && fact.call.origin.kind !== 'provider') {
    return [fact.operationId, fact.call.origin.parentOperationId];
  }
  return [fact.operationId];
}

function* loadSessions(builder: Kysely<LogDatabase>, cache: RuleCache, ids: string[]): Statements<void> {
  if (ids.length === 0) return;
  // Every new session's first batch reads these: built once per count, like the others.
  const rows = yield* run(
    templated(
      builder,
      `sessions.load.${ids.length}`,
      () =>
        builder.selectFrom('sessions').selectAll().where('session_id', 'in', slots(0, ids.length)).compile(),
      ids,
    ),
  );
  // A session's chain head is its last event; the index on (session_id, sequence) finds it.
  const buildHeads = () =>
    builder
      .selectFrom('events')
      .select(['session_id', 'sequence', 'session_digest'])
      .where('sequence', 'in', (eb) =>
        eb
          .selectFrom('events')
          .select((inner) => inner.fn.max('sequence').as('last'))
          .where('session_id', 'in', slots(0, ids.length))
          .groupBy('session_id'),
      )
      .compile();
  const heads = yield* run(templated(builder, `sessions.heads.${ids.length}`, buildHeads, ids));
  for (const id of ids) cache.session(id);
  for (const row of rows) {
    const session = cache.session(row.session_id);
    session.liveInvocationId = row.live_invocation_id;
    session.heldForInvocationId = row.held_for_invocation_id;
  }
  for (const row of heads) {
    cache.session(row.session_id).head = { sequence: Number(row.sequence), digest: row.session_digest };
  }
}

function* loadInvocations(
  builder: Kysely<LogDatabase>,
  cache: RuleCache,
  keys: { sessionId: string; invocationId: string }[],
): Statements<void> {
  if (keys.length === 0) return;
  const sessions = unique(keys.map((key) => key.sessionId));
  const invocations = unique(keys.map((key) => key.invocationId));
  const build = () =>
    builder
      .selectFrom('invocations')
      .select([
        'session_id',
        'invocation_id',
        'turn_id',
        'run_id',
        'ended_sequence',
        'terminal',
        'owner_host_id',
        'owner_epoch',
      ])
      .where('session_id', 'in', slots(0, sessions.length))
      .where('invocation_id', 'in', slots(sessions.length, invocations.length))
      .compile();
  const key = `invocations.load.${sessions.length}.${invocations.length}`;
  const rows = yield* run(templated(builder, key, build, [...sessions, ...invocations]));
  for (const row of rows) {
    cache.invocations.set(RuleCache.key(row.session_id, row.invocation_id), {
      turnId: row.turn_id,
      runId: row.run_id,
      ended: row.ended_sequence !== null,
      terminal: row.terminal,
      owner:
        row.owner_host_id === null ? null : { hostId: row.owner_host_id, epoch: Number(row.owner_epoch) },
    });
  }
}

function* loadOperations(
  builder: Kysely<LogDatabase>,
  cache: RuleCache,
  keys: { sessionId: string; operationId: string }[],
): Statements<void> {
  if (keys.length === 0) return;
  const sessions = unique(keys.map((key) => key.sessionId));
  const operations = unique(keys.map((key) => key.operationId));
  const build = () =>
    builder
      .selectFrom('operations')
      .select([
        'session_id',
        'operation_id',
        'invocation_id',
        'parent_operation_id',
        'state',
        'approval_invocation_id',
        'tool_name',
        'input_digest',
        'expires_at',
        'decision',
      ])
      .where('session_id', 'in', slots(0, sessions.length))
      .where('operation_id', 'in', slots(sessions.length, operations.length))
      .compile();
  const key = `operations.load.${sessions.length}.${operations.length}`;
  const rows = yield* run(templated(builder, key, build, [...sessions, ...operations]));
  for (const row of rows) {
    const operation: OperationState = {
      invocationId: row.invocation_id,
      parentOperationId: row.parent_operation_id,
      state: row.state,
    };
    if (row.approval_invocation_id !== null) {
      operation.approval = {
        invocationId: row.approval_invocation_id,
        toolName: row.tool_name ?? '',
        inputDigest: row.input_digest ?? '',
        expiresAt: row.expires_at === null ? null : Number(row.expires_at),
        decision: row.decision,
      };
    }
    cache.operations.set(RuleCache.key(row.session_id, row.operation_id), operation);
  }
}

function* loadSubmissions(
  builder: Kysely<LogDatabase>,
  cache: RuleCache,
  keys: { sessionId: string; key: string }[],
): Statements<void> {
  if (keys.length === 0) return;
  const rows = yield* run(
    builder
      .selectFrom('invocations')
      .select(['session_id', 'invocation_id', 'idempotency_key'])
      .where('session_id', 'in', unique(keys.map((key) => key.sessionId)))
      .where('idempotency_key', 'in', unique(keys.map((key) => key.key)))
      .compile(),
  );
  for (const row of rows) {
    if (row.idempotency_key === null) continue;
    cache.submissions.set(RuleCache.key(row.session_id, row.idempotency_key), row.invocation_id);
  }
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
