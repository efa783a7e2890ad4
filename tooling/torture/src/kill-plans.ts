import type { FailpointName, HookName, KillPlan } from './child/kill-switch.js';
import type { Random } from './child/random.js';
import type { StoreName } from './torture-store.js';

const hooks: readonly HookName[] = ['batchStarted', 'beforeCommit', 'afterCommit'];
const failpoints: readonly FailpointName[] = ['effect_start', 'effect_done', 'stream', 'cell', 'handoff'];
/** Between a person's decision and T2 of the approved call. */
const approvalPoints: readonly FailpointName[] = [
  'approval_decided',
  'approval_t1',
  'approval_mid',
  'approval_t2',
];

/**
 * Where the next child dies. One kill in twelve lands during the first open of a new
 * log (the driver's own timer); of the rest, about a third land on a commit hook
 * (inside a group commit), a third on a failpoint of the protocol, a third at a random
 * moment.
 * Counts are drawn small enough that the point is usually reached before the backstop,
 * which leaves a child 0.9 s after its log is open (it also starts the log's writer
 * thread in that time; at 0.7 s twice as many children died at the backstop).
 */
export function chooseKillPlan(random: Random, store: StoreName = 'sqlite'): KillPlan {
  const roll = random.next();
  if (roll < 0.08) {
    // During the first open of a new log: a SQLite open takes tens of milliseconds, a
    // PostgreSQL one (a new database, over the network) a few times more.
    return {
      point: { kind: 'open', delayMs: random.int(0, store === 'sqlite' ? 40 : 150) },
      backstopMs: 900,
    };
  }
  if (roll < 0.37) {
    return {
      point: { kind: 'hook', name: random.pick(hooks), count: random.int(1, 12) },
      backstopMs: 900,
    };
  }
  if (roll < 0.72) {
    // One failpoint kill in four lands between an approval's decision and its T2.
    const name = random.next() < 0.25 ? random.pick(approvalPoints) : random.pick(failpoints);
    // A handoff's count picks the hook of its sealing commit; cells and handoffs are rarer
    // than effects, so their counts stay low enough to be reached.
    const count =
      name === 'stream'
        ? random.int(1, 12)
        : name === 'effect_start' || name === 'effect_done'
          ? random.int(1, 4)
          : name === 'handoff'
            ? random.int(1, 3)
            : name.startsWith('approval_')
              ? 1
              : random.int(1, 2);
    return { point: { kind: 'failpoint', name, count }, backstopMs: 900 };
  }
  return { point: { kind: 'time' }, backstopMs: random.int(5, 250) };
}

/** A short label of a plan, for the per-point tally. */
export function planLabel(plan: KillPlan): string {
  const point = plan.point;
  return 'name' in point ? `${point.kind}:${point.name}` : point.kind;
}
