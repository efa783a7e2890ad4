import type { FailpointName, HookName, KillPlan } from './child/kill-switch.js';
import type { Random } from './child/random.js';

const hooks: readonly HookName[] = ['batchStarted', 'beforeCommit', 'afterCommit'];
const failpoints: readonly FailpointName[] = ['effect_start', 'effect_done', 'stream', 'cell', 'handoff'];

/**
 * Where the next child dies. About a third of the kills land on a commit hook (inside
 * a group commit), a third on a failpoint of the protocol, a third at a random moment.
 * Counts are drawn small enough that the point is usually reached before the backstop.
 */
export function chooseKillPlan(random: Random): KillPlan {
  const roll = random.next();
  if (roll < 0.35) {
    return {
      point: { kind: 'hook', name: random.pick(hooks), count: random.int(1, 40) },
      backstopMs: 1_500,
    };
  }
  if (roll < 0.7) {
    const name = random.pick(failpoints);
    const count = name === 'stream' ? random.int(1, 12) : random.int(1, 4);
    return { point: { kind: 'failpoint', name, count }, backstopMs: 1_500 };
  }
  return { point: { kind: 'time' }, backstopMs: random.int(5, 400) };
}

/** A short label of a plan, for the per-point tally. */
export function planLabel(plan: KillPlan): string {
  return plan.point.kind === 'time' ? 'time' : `${plan.point.kind}:${plan.point.name}`;
}
