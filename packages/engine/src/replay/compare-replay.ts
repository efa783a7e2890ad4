import { type Fact, type InvocationOutcome, parseFact } from '@factum/agent-facts';
import type { SessionEvent } from '../context-projection.js';
import { divergenceKind, isProduced, sameFact } from './compare-facts.js';
import type { ReplayDivergence } from './replay-report.js';

/**
 * Compares a replay's facts with an invocation's recorded ones, in order, as they come
 * (a fact equal to a recorded one, which the log parsed, needs no parse of its own):
 * `check` is asked after every step with everything produced so far and compares only
 * what it has not seen; the first difference is kept and stops the replay.
 */
export class ReplayComparison {
  readonly #recorded: readonly SessionEvent[];
  /**
   * Where the recording was cut from outside — by a crash, a cancel, a handoff, a model
   * error — when its end is not one the loop derives, or it has none: the facts before
   * it are compared, the end is taken as recorded, and what the replay goes on to do
   * past the cut (a cell the crash interrupted, a step the cancel prevented) is not.
   */
  readonly #cut: number | undefined;
  #seen = 0;
  #reachedCut = false;
  #divergence: ReplayDivergence | undefined;

  constructor(events: readonly SessionEvent[]) {
    this.#recorded = events.slice(1).filter((stored) => isProduced(stored.event.fact));
    const last = this.#recorded.at(-1)?.event.fact;
    const end = last?.kind === 'invocation_ended' ? last.outcome : undefined;
    if (end === undefined) this.#cut = this.#recorded.length;
    else if (!isDerivedEnd(end))
      this.#cut = this.#recorded.length - 1 - recoveryRejections(this.#recorded, end);
  }

  get divergence(): ReplayDivergence | undefined {
    return this.#divergence;
  }

  /** How many facts were compared (an end taken as recorded counts as one). */
  get compared(): number {
    return this.#seen + (this.#reachedCut && this.#cut! < this.#recorded.length ? 1 : 0);
  }

  /** Compares the facts not seen yet; false once the replay has diverged or passed the cut. */
  check(facts: readonly Fact[]): boolean {
    if (this.#divergence !== undefined || this.#reachedCut) return false;
    for (; this.#seen < facts.length; this.#seen += 1) {
      const index = this.#seen;
      if (index === this.#cut) {
        this.#reachedCut = true;
        return false;
      }
      const replayed = facts[index]!;
      const recorded = this.#recorded[index];
      if (recorded !== undefined && sameFact(recorded.event.fact, replayed)) continue;
      // The replay made its facts unparsed: one that differs is parsed before it is
      // reported, so a malformed fact fails as it would have when it was made.
      parseFact(replayed);
      this.#divergence = divergenceAt(index, recorded, replayed);
      this.#seen += 1;
      return false;
    }
    return true;
  }

  /** Compares everything once the replay is over: a recorded fact the replay did not produce is a divergence too. */
  finish(facts: readonly Fact[]): ReplayDivergence | undefined {
    if (!this.check(facts) || this.#reachedCut) return this.#divergence;
    if (this.#cut !== undefined && facts.length === this.#cut) {
      // The replay stopped exactly where the recording was cut (or an end it took as recorded follows).
      this.#reachedCut = true;
      return undefined;
    }
    const missing = this.#recorded[facts.length];
    if (missing !== undefined) this.#divergence = divergenceAt(facts.length, missing, undefined);
    return this.#divergence;
  }
}

/**
 * How many rejections a recovery wrote before its end: the calls of the crashed step that
 * never got a T1 are rejected `interrupted` (or `repeated_call_id`) by the recovery, with
 * its `failed {interrupted}` end, in one transaction.
 */
function recoveryRejections(recorded: readonly SessionEvent[], end: InvocationOutcome): number {
  if (end.kind !== 'failed' || end.error.code !== 'interrupted') return 0;
  let count = 0;
  for (let index = recorded.length - 2; index >= 0; index -= 1) {
    const fact = recorded[index]!.event.fact;
    const byRecovery =
      fact.kind === 'tool_rejected' &&
      (fact.reason.kind === 'interrupted' || fact.reason.kind === 'repeated_call_id');
    if (!byRecovery) break;
    count += 1;
  }
  return count;
}

/** Ends the loop derives itself from the model's answers; any other end came from outside the run. */
export function isDerivedEnd(end: InvocationOutcome): boolean {
  if (end.kind === 'completed' || end.kind === 'approval_pending') return true;
  return end.kind === 'failed' && ['step_limit', 'output_limit', 'model_refused'].includes(end.error.code);
}

function divergenceAt(
  index: number,
  recorded: SessionEvent | undefined,
  replayed: Fact | undefined,
): ReplayDivergence {
  const kinds = [recorded?.event.fact, replayed].filter((fact) => fact !== undefined);
  // One side ending where the other goes on is a different end, whatever the other side holds.
  const kind = kinds.some((fact) => fact.kind === 'invocation_ended') ? 'end' : divergenceKind(kinds[0]!);
  return {
    kind,
    index,
    ...(recorded === undefined ? {} : { recordedSequence: recorded.sequence, recorded: recorded.event.fact }),
    ...(replayed === undefined ? {} : { replayed }),
  };
}
