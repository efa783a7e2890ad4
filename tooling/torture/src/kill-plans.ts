import type { FailpointName, HookName, KillPlan } from './child/kill-switch.js';
import type { Random } from './child/random.js';

const hooks: readonly HookName[] = ['batchStarted', 'beforeCommit', 'afterCommit'];
const failpoints: readonly FailpointName[] = ['effect_start', 'effect_done', 'stream', 'cell', 'handoff'];

/**
 * Where the next child dies. About a third of the kills land on a commit hook (inside
 * a group commit), a third on a failpoint of the protocol, a third at a random moment.
 * Counts are drawn small enough that the point is usually reached before the backstop,
 * which leaves a child 0.9 s after its log is open (it also starts the log's writer
 * thread in that time; at 0.7 s twice as many children died at the backstop).
 */
export function chooseKillPlan(random: Random): KillPlan {
  const roll = random.next();
  if (roll < 0.35) {
    return {
      point: { kind: 'hook', name: random.pick(hooks), count: random.int(1, 12) },
      backstopMs: 900,
    };
  }
  if (roll < 0.7) {
    const name = random.pick(failpoints);
    // A handoff's count picks the hook of its sealing commit; cells and handoffs are rarer
    // than effects, so their counts stay low enough to be reached.
    const count =
      name === 'stream'
        ? random.int(1, 12)
        : name === 'effect_start' || name === 'effect_done'
          ? random.int(1, 4)
          : name === 'handoff'
            ? random.int(1, 3)
            : random.int(1, 2);
    return { point: { kind: 'failpoint', name, count }, backstopMs: 900 };
  }
  return { point: { kind: 'time' }, backstopMs: random.int(5, 250) };
}

/** A short label of a plan, for the per-point tally. */
export function planLabel(plan: KillPlan): string {
  return plan.point.kind === 'time' ? 'time' : `${plan.point.kind}:${plan.point.name}`;
}
