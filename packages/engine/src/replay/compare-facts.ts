import { canonicalJson, type Fact, sameJson } from '@factum/agent-facts';
import type { DivergenceKind } from './replay-report.js';

/**
 * Facts a replay does not produce: a person's decision, a recovery's or an operator's
 * reconciliation and re-dispatch are inputs of the run, not its output; the model's
 * streamed observations are the recorded answer itself.
 */
const NOT_PRODUCED = new Set<Fact['kind']>([
  'approval_decided',
  'tool_reconciled',
  'tool_redispatched',
  'model_observed',
]);

/** Whether a fact is one the engine produces (and a replay compares). */
export function isProduced(fact: Fact): boolean {
  return !NOT_PRODUCED.has(fact.kind);
}

/**
 * The bytes two facts are compared by: the fact's canonical JSON, without what only the
 * log's position or clock decides — a request's `source` (the sequence and chain digest
 * of the prefix it stood on) and an approval's `expiresAt`. Event ids, times, sequences
 * and the invocation are not part of a fact.
 */
export function comparable(fact: Fact): string {
  return canonicalJson(withoutPlace(fact));
}

/**
 * Whether two facts compare the same: equal as values is enough (what is equal as a
 * value has one canonical text), and only facts that differ as values — a number's
 * spelling, a field present as `undefined` — are compared by their canonical text.
 */
export function sameFact(recorded: Fact, replayed: Fact): boolean {
  if (recorded.kind !== replayed.kind) return false;
  const place = PLACE[recorded.kind];
  return sameJson(recorded, replayed, place) || comparable(recorded) === comparable(replayed);
}

/** The field of a fact of each kind that only the log's position or clock decides. */
const PLACE: Partial<Record<Fact['kind'], string>> = {
  model_requested: 'source',
  approval_requested: 'expiresAt',
};

/** A fact without what `comparable` leaves out. */
function withoutPlace(fact: Fact): object {
  const place = PLACE[fact.kind];
  if (place === undefined) return fact;
  const { [place]: _place, ...rest } = fact as Record<string, unknown>;
  return rest;
}

/** The kind of divergence a fact of this kind stands for. */
export function divergenceKind(fact: Fact): DivergenceKind {
  switch (fact.kind) {
    case 'model_requested':
      return 'request';
    case 'model_completed':
      return 'answer';
    case 'tool_dispatched':
      return 'call';
    case 'tool_settled':
    case 'tool_notified':
      return 'result';
    case 'tool_rejected':
      return 'rejection';
    case 'approval_requested':
      return 'approval';
    case 'invocation_ended':
      return 'end';
    default:
      return 'fact';
  }
}
