import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventLog } from '@factum/event-log';
import { type CheckPhase, checkInvariants, type Violation } from './check-invariants.js';
import { readLedger } from './child/ledger.js';
import type { Random } from './child/random.js';
import { tortureCatalog } from './child/torture-tools.js';
import { chooseFleetPlan, FLEET_TTL_MS } from './fleet-plans.js';
import { type FleetFiles, type FleetRoundResult, runFleetRound } from './fleet-round.js';
import { planLabel } from './kill-plans.js';
import { type LeaseRecord, readLeaseHistory, recordLeaseHistory } from './lease-history.js';
import { takeSnapshot } from './log-snapshot.js';
import { PARTITION_TTL_MS } from './partition-chaos.js';
import { recoverLog } from './recover-log.js';
import { stalledRenewal } from './renewal-stall.js';
import { describeTarget, type TortureStore } from './torture-store.js';
import {
  countChildErrors,
  freePort,
  type KillBudget,
  PORT_BUSY,
  type TortureTally,
} from './torture-worker.js';

/**
 * The multi-host mode: rounds of `hosts` children on one shared log, one victim per
 * round, and the checks after each round across every host's facts. A fresh log is
 * started every `rotateEvery` rounds.
 */
export async function runFleetWorker(options: {
  readonly directory: string;
  readonly childEntry: string;
  readonly random: Random;
  readonly store: TortureStore;
  readonly budget: KillBudget;
  readonly tally: TortureTally;
  readonly hosts: number;
  readonly sessions: number;
  readonly rotateEvery: number;
  /** Partition mode (PostgreSQL): each host behind its own faulty network, leases of 3 s. */
  readonly partition?: boolean;
  readonly onKill?: () => void;
}): Promise<void> {
  const { directory, random, tally, store } = options;
  const ttlMs = options.partition === true ? PARTITION_TTL_MS : FLEET_TTL_MS;
  mkdirSync(directory, { recursive: true });
  let generation = 0;
  let files = await freshFleetLog(store, directory, 0, options.hosts + 1, options.sessions);
  let rounds = 0;
  while (options.budget.take()) {
    const plan = chooseFleetPlan(random, store.name, ttlMs);
    const round = await runFleetRound({
      entry: options.childEntry,
      files,
      hosts: options.hosts,
      plan,
      random,
      nextGeneration: () => ++generation,
      ttlMs,
      ...(options.partition === true ? { faults: tally.faults } : {}),
    });
    rounds += 1;
    tally.kills += 1;
    const label = planLabel(plan.victim);
    tally.byPoint[label] = (tally.byPoint[label] ?? 0) + 1;
    for (const host of round.hosts) {
      countChildErrors(tally, host.exit.stderr);
      // Kept with the logs when a violation keeps the run's directory.
      writeFileSync(join(directory, `${host.id}-${host.role}.stderr`), host.exit.stderr);
    }
    // Behind a faulty network a renewal may wait on a stalled socket: no stall bound there.
    const since = await checkFleet(files, round, tally, options.partition === true ? undefined : ttlMs);
    options.onKill?.();
    // A host whose port another process took wrote nothing; the next round takes new ports.
    const portBusy = round.hosts.some((host) => host.exit.code === PORT_BUSY);
    if (portBusy) tally.portRetries += 1;
    if (since === undefined || portBusy || rounds % options.rotateEvery === 0)
      files = await freshFleetLog(store, directory, generation, options.hosts + 1, options.sessions);
    else files.since = since;
  }
}

/**
 * The round's own rules, then the single-host checks across every host's facts, then
 * reconciliation (no recovery is left to do: the survivors did it) and the checks again.
 */
async function checkFleet(
  files: FleetFiles,
  round: FleetRoundResult,
  tally: TortureTally,
  stallTtlMs: number | undefined,
): Promise<number | undefined> {
  const name = describeTarget(files.log);
  const violate = (rule: string, detail: string) =>
    tally.violations.push({ rule, detail: `${name}: ${detail}` });
  let checked = 0;
  const expect = (ok: boolean, rule: string, detail: () => string) => {
    checked += 1;
    if (!ok) violate(rule, detail());
  };
  for (const host of round.hosts) {
    const survives = host.role === 'survivor' || host.paused;
    const crashed = host.exit.code !== 0 || host.exit.signal !== null;
    // A run ended or taken over under a host makes its later commits refused; a refusal
    // nobody handles (and the crash it causes) is a defect, checked below as such.
    const unhandledRefusal =
      host.exit.code === 1 &&
      (host.exit.stderr.includes("code: 'sealed_invocation'") || host.exit.stderr.includes("code: 'fenced'"));
    if (host.exit.code === PORT_BUSY) {
      // Another process took one of its sessions' ports before it listened: it stopped
      // before opening the log, so it took no part in the round (as in the single-host mode).
    } else if (survives && !host.paused && crashed && host.leaseLost && !unhandledRefusal) {
      // A host that stalled past its lease (a loaded machine) stops starting effects and may
      // end early; its effects and facts are still checked below.
      const key = 'host lost its lease and stopped';
      tally.childErrors[key] = (tally.childErrors[key] ?? 0) + 1;
    } else if (survives && unhandledRefusal) {
      violate(
        'unhandled_refusal',
        `${host.id} died of an unhandled refusal: ${host.exit.stderr.slice(-2_000)}`,
      );
    } else if (survives) {
      expect(
        host.exit.code === 0 && host.exit.signal === null,
        'survivor_completed',
        () =>
          `${host.id} (${host.role}) ended with code ${host.exit.code} and signal ${host.exit.signal}: ${host.exit.stderr.slice(-2_000)}`,
      );
    } else if (host.plan.point.kind !== 'pause') {
      expect(host.exit.signal === 'SIGKILL', 'child_killed', () => `${host.id} ended with ${host.exit.code}`);
    }
    if (host.paused) {
      const where = host.pauseLate ? 'paused:late' : host.pauseDeferred ? 'paused:after_commit' : 'paused';
      tally.diedAt[where] = (tally.diedAt[where] ?? 0) + 1;
      // Paused mid-effect, its T2 is still to write: once resumed it must meet the fence.
      // A deferred pause may come after its runs ended: nothing of it is left to fence.
      if (!host.pauseDeferred && !host.pauseLate) {
        expect(
          host.exit.stderr.includes('fenced'),
          'paused_host_fenced',
          () => `${host.id} resumed after its takeover and no write of it was refused as fenced`,
        );
      }
    }
    if (host.leaseLost && !host.paused) {
      const key = 'survivor lease lapsed (stalled past its time-to-live)';
      tally.childErrors[key] = (tally.childErrors[key] ?? 0) + 1;
    }
    if (stallTtlMs !== undefined) {
      const stalled = stalledRenewal(host, stallTtlMs);
      expect(stalled === undefined, 'survivor_renewal_stalled', () => stalled!);
    }
  }
  expect(
    round.unswept.length === 0,
    'swept_by_survivor',
    () => `no survivor recovered ${round.unswept.join(', ')} within the wait`,
  );
  // Whose runs a recovery may end: a dead, paused or crashed host's, one whose lease
  // lapsed, or a run that failed with its end maybe unrecorded (a store out of reach).
  const endable = new Set(
    round.hosts
      .filter(
        (h) =>
          h.role !== 'survivor' || h.paused || h.leaseLost || h.exit.code !== 0 || h.exit.signal !== null,
      )
      .flatMap((h) => h.runs)
      .concat(round.hosts.flatMap((h) => h.failedRuns)),
  );
  const owner = new Map(round.hosts.flatMap((h) => h.runs.map((run) => [run, h.id] as const)));

  let log: EventLog;
  try {
    log = await EventLog.open(files.log);
  } catch (error) {
    violate('opens_after_kill', String(error));
    return undefined;
  }
  try {
    // On PostgreSQL the database kept every lease version it committed: each effect is
    // judged against the lease of its host and epoch (effect_within_lease).
    const target = files.log;
    const leases: LeaseRecord[] | undefined =
      typeof target === 'string' ? undefined : await readLeaseHistory(target.postgres);
    const ledger = readLedger(files.ledger);
    if (leases !== undefined) {
      // Each effect counted once, though every later round on this log judges it again.
      const stamped = ledger.entries.filter((entry) => entry.at !== undefined).length;
      tally.effectsJudged += stamped - files.judged;
      files.judged = stamped;
    }
    const check = async (phase: CheckPhase) => {
      const snapshot = await takeSnapshot(log, files.since);
      const result = checkInvariants(snapshot, ledger, phase, leases);
      tally.invariantsChecked += result.checked;
      tally.violations.push(
        ...result.violations.map((v: Violation) => ({ ...v, detail: `${name}: ${v.detail}` })),
      );
      return snapshot;
    };
    const afterRound = await check('after_kill');
    for (const { sequence, event } of afterRound.events) {
      const fact = event.fact;
      if (sequence <= files.since || fact.kind !== 'invocation_ended') continue;
      if (fact.outcome.kind !== 'failed' || fact.outcome.error.code !== 'interrupted') continue;
      const id = event.invocation.invocationId;
      if (endable.has(id)) continue;
      // A takeover moves the owner: an end written under the run's own host is that host's
      // own sweep ending its own live run, which recovery must never do.
      const now = (await log.invocationOwnership(event.invocation))?.owner?.hostId;
      expect(
        false,
        'live_not_ended',
        () =>
          `${id} of live host ${owner.get(id) ?? '(unknown)'} was ended as interrupted by ${now ?? 'a writer without a lease'}`,
      );
    }
    // A host that stopped cleanly with its lease held ends its own runs; one that died,
    // was paused or let its lease lapse cannot (its end is refused), and once every host
    // has stopped no survivor is left to sweep it: recovery below ends those.
    const leftByLive = afterRound.unfinished.filter((i) => !endable.has(i.invocationId));
    expect(
      leftByLive.length === 0,
      'swept_by_survivor',
      () => `still unfinished after every host stopped: ${leftByLive.map((i) => i.invocationId).join(', ')}`,
    );
    const recovered = await recoverLog(log, afterRound, tortureCatalog({ ledger: files.ledger }));
    tally.reconciled += recovered.reconciled;
    const afterRecovery = await check('after_recovery');
    tally.invariantsChecked += checked;
    return afterRecovery.events.at(-1)?.sequence ?? 0;
  } finally {
    await log.close();
  }
}

async function freshFleetLog(
  store: TortureStore,
  directory: string,
  generation: number,
  slots: number,
  sessions: number,
): Promise<FleetFiles> {
  const all: { id: string; port: number }[][] = [];
  for (let slot = 0; slot < slots; slot += 1) {
    const ports: { id: string; port: number }[] = [];
    for (let i = 0; i < sessions; i += 1) ports.push({ id: `h${slot}s${i}`, port: await freePort() });
    all.push(ports);
  }
  const log = await store.fresh(directory, generation);
  // Made before its hosts start: several processes' first open of one new SQLite log can
  // fail with `database is locked` (the single-host mode's kills cover first opens).
  await (await EventLog.open(log)).close();
  if (typeof log !== 'string') await recordLeaseHistory(log.postgres);
  return {
    log,
    ledger: join(directory, `ledger-${generation}.jsonl`),
    slots: all,
    since: 0,
    judged: 0,
  };
}
