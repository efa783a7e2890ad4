import type { Fact } from '@factum/agent-facts';
import type { SessionEvent } from '../context-projection.js';
import { comparable, divergenceKind, isProduced } from './compare-facts.js';
import type { ReplayDivergence } from './replay-report.js';

/**
 * Compares a replay's facts with an invocation's recorded ones, in order, as they come:
 * `check` is asked after every step with everything produced so far and compares only
 * what it has not seen; the first difference is kept and stops the replay.
 */
export class ReplayComparison {
  readonly #recorded: readonly SessionEvent[];
  #seen = 0;
  #divergence: ReplayDivergence | undefined;

  constructor(events: readonly SessionEvent[]) {
    this.#recorded = events.slice(1).filter((stored) => isProduced(stored.event.fact));
  }

  get recorded(): readonly SessionEvent[] {
    return this.#recorded;
  }

  get divergence(): ReplayDivergence | undefined {
    return this.#divergence;
  }

  /** How many facts were compared. */
  get compared(): number {
    return this.#seen;
  }

  /** Compares the facts not seen yet; false once the replay has diverged. */
  check(facts: readonly Fact[]): boolean {
    if (this.#divergence !== undefined) return false;
    for (; this.#seen < facts.length; this.#seen += 1) {
      const index = this.#seen;
      const replayed = facts[index]!;
      const recorded = this.#recorded[index];
      if (recorded !== undefined && comparable(recorded.event.fact) === comparable(replayed)) continue;
      this.#divergence = divergenceAt(index, recorded, replayed);
      this.#seen += 1;
      return false;
    }
    return true;
  }

  /** Compares everything once the replay is over: a recorded fact the replay did not produce is a divergence too. */
  finish(facts: readonly Fact[]): ReplayDivergence | undefined {
    if (!this.check(facts)) return this.#divergence;
    const missing = this.#recorded[facts.length];
    if (missing !== undefined) this.#divergence = divergenceAt(facts.length, missing, undefined);
    return this.#divergence;
  }
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
