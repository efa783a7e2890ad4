import type { FactOf } from '@factum/agent-facts';
import type { Kysely } from 'kysely';
import { type ForkSourceState, forkSourceKey } from './fork-rule.js';
import { run, type Statements } from './log-dialect.js';
import type { LogDatabase } from './log-schema.js';
import type { RuleCache } from './rule-cache.js';
import type { StagedWrite } from './staged-write.js';

/**
 * Reads, for each `session_forked` of the batch, what its source session holds at the
 * boundary: the event there, the session's next event, and the boundary's invocation.
 * Three indexed reads per fork, whatever the source's length: a fork references its
 * prefix, it never reads it.
 */
export function* loadForkSources(
  builder: Kysely<LogDatabase>,
  cache: RuleCache,
  batch: readonly StagedWrite[],
): Statements<void> {
  for (const { event } of batch) {
    if (event.fact.kind !== 'session_forked') continue;
    const fact = event.fact;
    cache.forkSources.set(forkSourceKey(fact), yield* readForkSource(builder, fact));
  }
}

function* readForkSource(
  builder: Kysely<LogDatabase>,
  fact: FactOf<'session_forked'>,
): Statements<ForkSourceState> {
  const { sessionId, invocationId } = fact.source.invocation;
  const [row] = yield* run(
    builder
      .selectFrom('invocations')
      .select(['turn_id', 'run_id', 'ended_sequence'])
      .where('session_id', '=', sessionId)
      .where('invocation_id', '=', invocationId)
      .compile(),
  );
  if (row === undefined) return {};
  const invocation = { turnId: row.turn_id, runId: row.run_id, ended: row.ended_sequence !== null };
  const [at] = yield* run(
    builder
      .selectFrom('events')
      .select(['kind', 'invocation_id', 'session_digest'])
      .where('session_id', '=', sessionId)
      .where('sequence', '=', fact.source.highWater)
      .compile(),
  );
  const boundary =
    at === undefined
      ? undefined
      : { kind: at.kind, invocationId: at.invocation_id, sessionDigest: at.session_digest };
  if (fact.step === undefined) return { invocation, boundary };
  const [following] = yield* run(
    builder
      .selectFrom('events')
      .select(['kind', 'invocation_id', 'body'])
      .where('session_id', '=', sessionId)
      .where('sequence', '>', fact.source.highWater)
      .orderBy('sequence', 'asc')
      .limit(1)
      .compile(),
  );
  if (following === undefined) return { invocation, boundary };
  const next = {
    kind: following.kind,
    invocationId: following.invocation_id,
    stepId: stepIdOf(following.body),
  };
  return { invocation, boundary, next };
}

/** The step a stored `model_requested` names; undefined for a body that says none. */
function stepIdOf(body: string): string | undefined {
  try {
    const stepId = (JSON.parse(body) as { fact?: { stepId?: unknown } }).fact?.stepId;
    return typeof stepId === 'string' ? stepId : undefined;
  } catch {
    return undefined;
  }
}
