import { setTimeout as sleep } from 'node:timers/promises';
import { EventLog, type LogTarget } from '@factum/event-log';
import type { KillPlan } from './child/kill-switch.js';
import type { Random } from './child/random.js';
import { FLEET_SWEEP_MS, type FleetPlan } from './fleet-plans.js';
import { type FaultTally, PartitionedHost } from './partition-chaos.js';
import { type ChildExit, TortureChildProcess } from './torture-child-process.js';

/** One host of a round: its id, the runs it said it started, and how it ended. */
export type FleetHost = {
  readonly id: string;
  readonly role: 'survivor' | 'victim' | 'doomed';
  readonly plan: KillPlan;
  readonly exit: ChildExit;
  /** Invocations it started (from its stderr). */
  readonly runs: readonly string[];
  /**
   * Its runs that failed for a reason other than a refusal as `fenced` or
   * `sealed_invocation` (which say another host ended or took the run over): a store
   * out of reach, mostly, in partition mode. Their end may not be recorded: once the
   * host released its lease, another host's sweep or the driver's recovery ends them.
   */
  readonly failedRuns: readonly string[];
  /** Whether it stopped itself mid-effect and was resumed after a takeover. */
  readonly paused: boolean;
  /** Whether its pause waited for a commit of another session (its T2 may be written). */
  readonly pauseDeferred: boolean;
  /**
   * Whether it paused only after the driver had stopped waiting for its pause: no
   * survivor was waited for to take its runs over, and it was resumed as the round
   * stopped, so nothing of it is left to fence.
   */
  readonly pauseLate: boolean;
  /**
   * Whether its lease lapsed while it ran: lost and registered again, or unrenewed for
   * nearly its time-to-live (it says both when it stops), or past its local deadline (a
   * run refused as `lease_lost`). A host stalled
   * past its time-to-live is not live: its runs may rightly be recovered.
   */
  readonly leaseLost: boolean;
  /**
   * The longest time its lease went unrenewed, as it said when it stopped (undefined
   * for a host that did not stop by itself).
   */
  readonly renewGapMs: number | undefined;
};

/** What a round left for the checks: its hosts, and whether the sweepers finished in time. */
export type FleetRoundResult = {
  readonly hosts: readonly FleetHost[];
  /** Dead or paused hosts' invocations still unfinished when the wait ran out. */
  readonly unswept: readonly string[];
  readonly sweepMs: number;
};

/** The files of one shared log: its target, its ledger, and each host slot's sessions. */
export type FleetFiles = {
  readonly log: LogTarget;
  readonly ledger: string;
  readonly slots: readonly { id: string; port: number }[][];
  since: number;
  /** Effects of its ledger already judged against the leases. */
  judged: number;
};

const STOP_WAIT_MS = 30_000;

/**
 * One round of the multi-host mode: `hosts` children run turns on one log, each with
 * its own lease; the victim dies at its planned point (or stops itself and is resumed
 * once a survivor took its runs over), a doomed extra host first if the plan needs
 * expired runs. The driver only waits — bounded — until no dead host owns an unfinished
 * invocation: a survivor's sweeper must do that. Then the survivors are asked to stop,
 * which lets their runs finish.
 */
export async function runFleetRound(options: {
  readonly entry: string;
  readonly files: FleetFiles;
  readonly hosts: number;
  readonly plan: FleetPlan;
  readonly random: Random;
  readonly nextGeneration: () => number;
  /** Every host's lease time-to-live. */
  readonly ttlMs: number;
  /** Partition mode: each host reaches PostgreSQL through its own faulty network. */
  readonly faults?: FaultTally;
}): Promise<FleetRoundResult> {
  const { files, plan, random, ttlMs } = options;
  const victimSlot = random.int(0, options.hosts - 1);
  const slots = options.hosts + (plan.doomed ? 1 : 0);
  const target = files.log;
  const partitioned =
    options.faults === undefined || typeof target === 'string'
      ? undefined
      : await Promise.all(
          Array.from({ length: slots }, () =>
            PartitionedHost.start(target.postgres, random, options.faults!),
          ),
        );
  const started = Array.from({ length: slots }, (_, slot) => {
    const generation = options.nextGeneration();
    const role: FleetHost['role'] =
      slot === options.hosts ? 'doomed' : slot === victimSlot ? 'victim' : 'survivor';
    const hostPlan: KillPlan =
      role === 'victim'
        ? plan.victim
        : role === 'doomed'
          ? { point: { kind: 'time' }, backstopMs: random.int(150, 600) }
          : { point: { kind: 'none' }, backstopMs: 120_000 };
    const sweepEveryMs = role === 'victim' ? plan.victimSweepEveryMs : FLEET_SWEEP_MS;
    const id = `host-${generation}`;
    const child = new TortureChildProcess(options.entry);
    let paused = false;
    const pausedNow = new Promise<void>((resolve) =>
      child.onPaused(() => {
        paused = true;
        resolve();
      }),
    );
    const network = partitioned?.[slot];
    if (network !== undefined) {
      // Faults start once the host holds its lease: one that cannot open its log or
      // register at all only fails to start, which says nothing about leases.
      child.onSignal('hosting', () => network.run());
      child.onSignal('t1batch', () => network.atT1());
    }
    const exit = child.run({
      log:
        network === undefined || typeof target === 'string'
          ? target
          : { postgres: network.url(target.postgres) },
      ledger: files.ledger,
      generation,
      seed: Math.floor(random.next() * 2 ** 32),
      plan: hostPlan,
      sessions: files.slots[slot]!,
      host: { id, ttlMs, sweepEveryMs, ...(network === undefined ? {} : { partition: true }) },
    });
    return { id, role, plan: hostPlan, child, exit, pausedNow, isPaused: () => paused };
  });

  const victim = started[victimSlot]!;
  const gone = new Set<string>();
  for (const host of started) if (host.role !== 'survivor') void host.exit.then(() => gone.add(host.id));
  const doomed = started.find((host) => host.role === 'doomed');
  if (doomed !== undefined) await doomed.exit;
  if (plan.victim.point.kind === 'pause') {
    // Paused, or never reached its point: then there is no victim this round.
    // A host behind a faulty network starts and reaches its effects later.
    await Promise.race([victim.pausedNow, victim.exit, sleep(partitioned === undefined ? 4_000 : 8_000)]);
  } else await victim.exit;
  const pausedInTime = victim.isPaused();

  const waitFrom = performance.now();
  const dead = started.filter((host) => gone.has(host.id) || host.isPaused()).map((host) => host.id);
  const unswept = await waitForSweep(files.log, dead, ttlMs);
  const sweepMs = performance.now() - waitFrom;
  if (victim.isPaused()) {
    // Its network heals first: what its stale writes meet must be the fence, not a fault.
    partitioned?.[victimSlot]?.stop();
    victim.child.resume();
    // Its stale writes (T2, the run's end) meet the fence now.
    await sleep(500);
  }
  // The network heals before the hosts are asked to stop: they finish their runs on it.
  for (const network of partitioned ?? []) network.stop();
  // Asking a dead child to stop is harmless: its stdin is gone. SIGCONT is sent again
  // until the end, in case the first one came before the child had stopped itself.
  for (const host of started) host.child.stop();
  const again = setInterval(() => {
    for (const host of started) if (host.isPaused()) host.child.resume();
  }, 1_000);
  const timer = setTimeout(() => {
    for (const host of started) host.child.kill();
  }, STOP_WAIT_MS);
  const exits = await Promise.all(started.map((host) => host.exit));
  clearTimeout(timer);
  clearInterval(again);
  await Promise.all((partitioned ?? []).map((network) => network.close()));
  return {
    hosts: started.map((host, i) => {
      const { stderr } = exits[i]!;
      const renewGapMs = longest(said(stderr, 'renewGapMs'));
      return {
        id: host.id,
        role: host.role,
        plan: host.plan,
        exit: exits[i]!,
        runs: said(stderr, 'runs'),
        failedRuns: failedRuns(stderr),
        paused: host.isPaused(),
        pauseLate: host.isPaused() && !(host === victim && pausedInTime),
        pauseDeferred: said(stderr, 'deferred').includes('true'),
        leaseLost:
          said(stderr, 'leaseLost').some((lost) => Number(lost) > 0) ||
          (renewGapMs !== undefined && renewGapMs >= ttlMs * 0.9) ||
          said(stderr, 'code').includes('lease_lost'),
        renewGapMs,
      };
    }),
    unswept,
    sweepMs,
  };
}

/**
 * Waits until no host in `dead` owns an unfinished invocation (their leases run out,
 * then a survivor's sweep takes them over), at most the time-to-live plus a generous
 * margin for a loaded machine. Returns what is still unfinished at the end.
 */
async function waitForSweep(target: LogTarget, dead: readonly string[], ttlMs: number): Promise<string[]> {
  if (dead.length === 0) return [];
  const log = await EventLog.open(target);
  try {
    // A deadline, not a pause: on a quiet machine the sweep lands within the TTL and a
    // sweep or two; a saturated one (survivors starved of CPU) may need much longer.
    const deadline = performance.now() + ttlMs + 4 * FLEET_SWEEP_MS + 30_000;
    for (;;) {
      const left = (await log.unfinishedOwnership(100_000))
        .filter((u) => u.ownership.owner !== undefined && dead.includes(u.ownership.owner.hostId))
        .map((u) => u.invocation.invocationId);
      if (left.length === 0 || performance.now() > deadline) return left;
      await sleep(100);
    }
  } finally {
    await log.close();
  }
}

/** The runs a host said failed, but not because another host ended or took them over. */
function failedRuns(stderr: string): string[] {
  const runs: string[] = [];
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('{"runFailed"')) continue;
    try {
      const { runFailed, codes } = JSON.parse(line) as { runFailed: string; codes: string[] };
      if (!codes.some((code) => code === 'fenced' || code === 'sealed_invocation')) runs.push(runFailed);
    } catch {}
  }
  return runs;
}

/** The values of `key` in the JSON lines of a child's stderr. */
function said(stderr: string, key: string): string[] {
  const values: string[] = [];
  for (const line of stderr.split('\n')) {
    if (!line.includes(`"${key}"`)) continue;
    try {
      const value = (JSON.parse(line) as Record<string, unknown>)[key];
      if (value !== undefined) values.push(String(value));
    } catch {}
  }
  return values;
}

/** The largest of numbers a child said, or undefined when it said none. */
function longest(values: readonly string[]): number | undefined {
  return values.length === 0 ? undefined : Math.max(...values.map(Number));
}
