import type { KillPlan } from './child/kill-switch.js';
import type { Random } from './child/random.js';
import { chooseKillPlan } from './kill-plans.js';
import type { StoreName } from './torture-store.js';

/** A multi-host round's plan: where its victim dies, and whether another host dies first. */
export type FleetPlan = {
  /** The victim's plan: a SIGKILL point, or a SIGSTOP (`pause`) it is resumed from. */
  readonly victim: KillPlan;
  /** A host killed early so that the victim's `takeover`/`sweep` point has expired runs to meet. */
  readonly doomed: boolean;
  /** How often the victim sweeps (a `takeover` victim sweeps first; a `sweep` victim never). */
  readonly victimSweepEveryMs: number;
};

/** Lease time-to-live of every host of a multi-host round: short, so a round stays short. */
export const FLEET_TTL_MS = 2_000;
/** How often a surviving host sweeps. */
export const FLEET_SWEEP_MS = 250;

/**
 * Where a multi-host round's victim dies: two rounds in five at the single-host points
 * (commit hooks, failpoints, random moments; never a first open, which has nothing to
 * share), the rest at the lease points — during a takeover, between a renewal and the
 * next commit, during a T1 while another host's runs await the sweep — or paused
 * mid-effect with SIGSTOP until a survivor took it over.
 */
export function chooseFleetPlan(random: Random, store: StoreName, ttlMs = FLEET_TTL_MS): FleetPlan {
  const roll = random.next();
  const sweep = FLEET_SWEEP_MS;
  if (roll < 0.4) {
    let plan = chooseKillPlan(random, store);
    while (plan.point.kind === 'open') plan = chooseKillPlan(random, store);
    // Several hosts start at once and share two cores: give the point more time.
    const backstopMs = plan.point.kind === 'time' ? plan.backstopMs + 300 : 2_500;
    return { victim: { point: plan.point, backstopMs }, doomed: false, victimSweepEveryMs: sweep };
  }
  const expiredSoon = ttlMs + 3_000;
  if (roll < 0.55) {
    return {
      victim: { point: { kind: 'lease', name: 'takeover', count: 1 }, backstopMs: expiredSoon },
      doomed: true,
      victimSweepEveryMs: 50,
    };
  }
  if (roll < 0.7) {
    return {
      victim: {
        point: { kind: 'lease', name: 'renewed', count: random.int(1, 3) },
        backstopMs: ttlMs + 1_500,
      },
      doomed: false,
      victimSweepEveryMs: sweep,
    };
  }
  if (roll < 0.85) {
    return {
      victim: { point: { kind: 'lease', name: 'sweep', count: random.int(1, 2) }, backstopMs: expiredSoon },
      doomed: true,
      victimSweepEveryMs: 0,
    };
  }
  // Paused, the victim survives: its backstop only guards a child that never stops.
  return {
    victim: { point: { kind: 'pause', count: random.int(1, 3) }, backstopMs: 120_000 },
    doomed: false,
    victimSweepEveryMs: sweep,
  };
}
