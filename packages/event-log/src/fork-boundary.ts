import type { FactOf, RunBoundary } from '@factum/agent-facts';
import type { Kysely } from 'kysely';
import { AppendRefusedError } from './append-refused-error.js';
import type { LogDatabase } from './log-schema.js';
import { decodeRow } from './stored-event.js';

/** Where a fork starts: the boundary its `session_forked` records. */
export type ForkPoint = Pick<FactOf<'session_forked'>, 'source' | 'step'>;

/**
 * Resolves `at` in a session's history to the boundary a fork of it records: the end of
 * an invocation (`at` is its id), or the last event before a step's `model_requested`
 * (`at` is a step id, `<invocationId>/<n>`); without `at`, the end of the last invocation
 * that ended. A boundary in a prefix the session inherits (it is itself a fork) is named
 * in the session that holds it, so a fork of a fork references the original directly.
 * Refused (`AppendRefusedError`, nothing written) when the session, the invocation or the
 * step is not in its history, or the invocation has not ended (`source_live`).
 */
export async function resolveForkPoint(
  db: Kysely<LogDatabase>,
  sessionId: string,
  at: string | undefined,
): Promise<ForkPoint> {
  let session = sessionId;
  let upTo = Number.MAX_SAFE_INTEGER;
  for (;;) {
    const found = at === undefined ? await lastEnd(db, session, upTo) : await named(db, session, at, upTo);
    if (found !== undefined) return found;
    const first = await firstEvent(db, session);
    if (first === undefined) {
      throw new AppendRefusedError('unknown_session', `session ${sessionId} has no facts: nothing to fork`);
    }
    if (first.kind !== 'session_forked') break;
    session = first.source.invocation.sessionId;
    upTo = first.source.highWater;
  }
  throw new AppendRefusedError(
    'invalid_boundary',
    at === undefined
      ? `session ${sessionId} has no invocation that ended: fork once one has, or name a step with --at`
      : `session ${sessionId} has no invocation or step ${at} in its history: name one that \`factum show\` lists`,
  );
}

async function firstEvent(db: Kysely<LogDatabase>, sessionId: string) {
  const row = await db
    .selectFrom('events')
    .select(['sequence', 'body'])
    .where('session_id', '=', sessionId)
    .orderBy('sequence', 'asc')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : decodeRow(row).event.fact;
}

async function lastEnd(
  db: Kysely<LogDatabase>,
  sessionId: string,
  upTo: number,
): Promise<ForkPoint | undefined> {
  const row = await db
    .selectFrom('invocations')
    .select(['invocation_id'])
    .where('session_id', '=', sessionId)
    .where('ended_sequence', 'is not', null)
    .where('ended_sequence', '<=', upTo)
    .orderBy('ended_sequence', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : endOf(db, sessionId, row.invocation_id, upTo);
}

/** `at` as an invocation id first (ids may hold a slash), else as a step id `<invocation>/<n>`. */
async function named(
  db: Kysely<LogDatabase>,
  sessionId: string,
  at: string,
  upTo: number,
): Promise<ForkPoint | undefined> {
  const end = await endOf(db, sessionId, at, upTo);
  if (end !== undefined) return end;
  const slash = at.lastIndexOf('/');
  return slash > 0
    ? stepOf(db, sessionId, { invocationId: at.slice(0, slash), stepId: at }, upTo)
    : undefined;
}

async function invocationRow(db: Kysely<LogDatabase>, sessionId: string, invocationId: string, upTo: number) {
  const row = await db
    .selectFrom('invocations')
    .select(['turn_id', 'run_id', 'opened_sequence', 'ended_sequence'])
    .where('session_id', '=', sessionId)
    .where('invocation_id', '=', invocationId)
    .executeTakeFirst();
  if (row === undefined || Number(row.opened_sequence) > upTo) return undefined;
  if (row.ended_sequence === null) {
    throw new AppendRefusedError(
      'source_live',
      `invocation ${invocationId} of session ${sessionId} is still live: fork at an invocation that has ended, or once it ends`,
    );
  }
  const invocation = { sessionId, turnId: row.turn_id, runId: row.run_id, invocationId };
  return { invocation, ended: Number(row.ended_sequence) };
}

async function endOf(
  db: Kysely<LogDatabase>,
  sessionId: string,
  invocationId: string,
  upTo: number,
): Promise<ForkPoint | undefined> {
  const row = await invocationRow(db, sessionId, invocationId, upTo);
  if (row === undefined || row.ended > upTo) return undefined;
  return { source: await boundaryAt(db, row.invocation, row.ended) };
}

async function stepOf(
  db: Kysely<LogDatabase>,
  sessionId: string,
  at: { readonly invocationId: string; readonly stepId: string },
  upTo: number,
): Promise<ForkPoint | undefined> {
  const row = await invocationRow(db, sessionId, at.invocationId, upTo);
  if (row === undefined) return undefined;
  const requested = await db
    .selectFrom('events')
    .select(['sequence', 'body'])
    .where('session_id', '=', sessionId)
    .where('invocation_id', '=', at.invocationId)
    .where('kind', '=', 'model_requested')
    .where('sequence', '<=', upTo)
    .orderBy('sequence', 'asc')
    .execute();
  const step = requested
    .map(decodeRow)
    .find(({ event }) => 'stepId' in event.fact && event.fact.stepId === at.stepId);
  if (step === undefined) return undefined;
  const before = await db
    .selectFrom('events')
    .select(['sequence'])
    .where('session_id', '=', sessionId)
    .where('sequence', '<', step.sequence)
    .orderBy('sequence', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  return { source: await boundaryAt(db, row.invocation, Number(before.sequence)), step: at.stepId };
}

async function boundaryAt(
  db: Kysely<LogDatabase>,
  invocation: RunBoundary['invocation'],
  sequence: number,
): Promise<RunBoundary> {
  const row = await db
    .selectFrom('events')
    .select(['session_digest'])
    .where('session_id', '=', invocation.sessionId)
    .where('sequence', '=', sequence)
    .executeTakeFirstOrThrow();
  return { invocation, highWater: sequence, digest: row.session_digest };
}
