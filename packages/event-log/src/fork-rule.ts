import type { FactOf, Invocation } from '@factum/agent-facts';
import { RuleRefusal } from './rule-refusal.js';

/**
 * What the log holds at a fork's boundary in its source session, read inside the
 * fork's write transaction. A prefix never changes once written, and an invocation
 * that ended stays ended, so what this says cannot turn false before the commit.
 */
export type ForkSourceState = {
  /** The source session's event at the boundary's high water, if it has one there. */
  readonly boundary?: {
    readonly kind: string;
    readonly invocationId: string;
    readonly sessionDigest: string;
  };
  /** The source session's next event after the boundary (a step boundary's `model_requested`). */
  readonly next?: { readonly kind: string; readonly invocationId: string; readonly stepId?: string };
  /** The invocation the boundary lies in, as its row says. */
  readonly invocation?: { readonly turnId: string; readonly runId: string; readonly ended: boolean };
};

/** The key a fork's source state is kept under: the source session and the high water. */
export function forkSourceKey(fact: FactOf<'session_forked'>): string {
  return `${fact.source.invocation.sessionId}\u0000${fact.source.highWater}`;
}

/**
 * Judges a `session_forked` write: it must be the first fact of a session of its own,
 * and its boundary a real one of the source — the end of an ended invocation, or the
 * last event of the source session before one of its steps' `model_requested` — with
 * the source session's chain digest there. A run still live is never cut: a step
 * boundary needs its invocation to have ended (an ended invocation of a session whose
 * later run is live is fine, the prefix is immutable).
 */
export function checkFork(
  fact: FactOf<'session_forked'>,
  invocation: Invocation,
  target: { readonly empty: boolean },
  source: ForkSourceState | undefined,
): void {
  const { source: boundary, step } = fact;
  const from = boundary.invocation;
  if (from.sessionId === invocation.sessionId) {
    throw new RuleRefusal('invalid_write', `session ${invocation.sessionId} cannot be forked into itself`);
  }
  if (!target.empty) {
    throw new RuleRefusal(
      'session_exists',
      `session ${invocation.sessionId} already has facts: a fork starts a new session; pick another id`,
    );
  }
  const known = source?.invocation;
  if (known === undefined) {
    throw new RuleRefusal(
      'unknown_session',
      `session ${from.sessionId} has no invocation ${from.invocationId}: fork a session and boundary the log holds`,
    );
  }
  if (known.turnId !== from.turnId || known.runId !== from.runId) {
    throw new RuleRefusal(
      'invalid_boundary',
      `invocation ${from.invocationId} belongs to turn ${known.turnId} / run ${known.runId}, not ${from.turnId} / ${from.runId}`,
    );
  }
  if (!known.ended) {
    throw new RuleRefusal(
      'source_live',
      `invocation ${from.invocationId} of session ${from.sessionId} is still live: fork at an invocation that has ended, or once it ends`,
    );
  }
  const at = source?.boundary;
  if (at === undefined || at.sessionDigest !== boundary.digest) {
    throw new RuleRefusal(
      'invalid_boundary',
      `session ${from.sessionId} has no event at ${boundary.highWater} with digest ${boundary.digest}: the boundary is not of this log`,
    );
  }
  if (step === undefined) {
    if (at.kind !== 'invocation_ended' || at.invocationId !== from.invocationId) {
      throw new RuleRefusal(
        'invalid_boundary',
        `sequence ${boundary.highWater} is not the end of invocation ${from.invocationId}: name its invocation_ended`,
      );
    }
    return;
  }
  const next = source?.next;
  if (
    next === undefined ||
    next.kind !== 'model_requested' ||
    next.invocationId !== from.invocationId ||
    next.stepId !== step
  ) {
    throw new RuleRefusal(
      'invalid_boundary',
      `sequence ${boundary.highWater} is not the last event of session ${from.sessionId} before step ${step}'s model_requested`,
    );
  }
}
