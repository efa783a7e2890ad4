import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { EventLog, type LogTarget } from '@factum/event-log';
import { type CheckPhase, checkInvariants, type Violation } from './check-invariants.js';
import { readLedger } from './child/ledger.js';
import type { Random } from './child/random.js';
import { tortureCatalog } from './child/torture-tools.js';
import { chooseKillPlan, planLabel } from './kill-plans.js';
import { takeSnapshot } from './log-snapshot.js';
import { recoverLog } from './recover-log.js';
import { type ChildConfig, TortureChildProcess } from './torture-child-process.js';
import { describeTarget, type TortureStore } from './torture-store.js';

/** The tallies every worker adds to. */
export type TortureTally = {
  kills: number;
  invariantsChecked: number;
  violations: Violation[];
  byPoint: Record<string, number>;
  /** Where children really died (a planned point, or the backstop timer). */
  diedAt: Record<string, number>;
  childErrors: Record<string, number>;
  reconciled: number;
  portRetries: number;
  /** Partition mode: what the hosts' networks did (`stall`, `hold_answers`, `cut`, `t1:…`). */
  faults: Record<string, number>;
  /** Effects judged against their host's committed lease (effect_within_lease), per check. */
  effectsJudged: number;
};

/** The next kill to make, shared by every worker; false when there are no more. */
export type KillBudget = { take(): boolean };

type LogFiles = { log: LogTarget; ledger: string; sessions: { id: string; port: number }[]; since: number };

/** A child's exit code when another process took one of its sessions' ports before it listened: it wrote nothing. */
export const PORT_BUSY = 4;

/**
 * One worker: starts a child, lets it run until it is killed, then reopens its log,
 * checks the invariants, recovers and reconciles, and checks again — over and over,
 * each child resuming the sessions the last one left. A fresh log is started every
 * `rotateEvery` kills so that the checks stay cheap.
 */
export async function runWorker(options: {
  readonly directory: string;
  /** The bundled child script every child of the run starts from. */
  readonly childEntry: string;
  readonly random: Random;
  /** Where each new log is made. */
  readonly store: TortureStore;
  readonly budget: KillBudget;
  readonly tally: TortureTally;
  readonly sessions: number;
  readonly rotateEvery: number;
  readonly onKill?: () => void;
}): Promise<void> {
  const { directory, random, budget, tally, store } = options;
  mkdirSync(directory, { recursive: true });
  let generation = 0;
  let files = await freshLog(store, directory, 0, options.sessions);
  let warm = new TortureChildProcess(options.childEntry);
  try {
    let retry = false;
    while (retry || budget.take()) {
      retry = false;
      const child = warm;
      warm = new TortureChildProcess(options.childEntry);
      generation += 1;
      const plan = chooseKillPlan(random, store.name);
      // A kill during a first open needs a log nothing has opened yet.
      if (plan.point.kind === 'open' && files.since > 0) {
        files = await freshLog(store, directory, generation, options.sessions);
      }
      const config: ChildConfig = {
        log: files.log,
        ledger: files.ledger,
        generation,
        seed: Math.floor(random.next() * 2 ** 32),
        plan,
        sessions: files.sessions,
      };
      const exit = await child.run(config);
      if (exit.code === PORT_BUSY) {
        // Another process took a session's port: nothing was written; start a new log.
        tally.portRetries += 1;
        files = await freshLog(store, directory, generation, options.sessions);
        retry = true;
        continue;
      }
      tally.kills += 1;
      tally.byPoint[planLabel(config.plan)] = (tally.byPoint[planLabel(config.plan)] ?? 0) + 1;
      if (exit.signal !== 'SIGKILL') {
        tally.violations.push({
          rule: 'child_killed',
          detail: `child ${generation} ended with code ${exit.code} and signal ${exit.signal}: ${exit.stderr.slice(0, 2_000)}`,
        });
      }
      if (plan.point.kind === 'open') {
        // The driver's kill landed inside the first open, or after it (in the first turns).
        const where = exit.stderr.includes('{"opened":true}') ? 'open:after' : 'open:during';
        tally.diedAt[where] = (tally.diedAt[where] ?? 0) + 1;
      }
      countChildErrors(tally, exit.stderr);
      const since = await checkAndRecover(files, tally);
      options.onKill?.();
      if (since === undefined || generation % options.rotateEvery === 0)
        files = await freshLog(store, directory, generation, options.sessions);
      else files.since = since;
    }
  } finally {
    await warm.discard();
  }
}

/** The children's host id: the checker takes it over as a restarted host would. */
const TORTURE_HOST_ID = 'torture-host';

/** Checks, recovers and checks again; undefined when the log no longer opens (a violation). */
async function checkAndRecover(files: LogFiles, tally: TortureTally): Promise<number | undefined> {
  const name = describeTarget(files.log);
  let log: EventLog;
  try {
    log = await EventLog.open(files.log);
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    tally.violations.push({
      rule: 'opens_after_kill',
      detail: `${name}: ${String(error)}${cause === undefined ? '' : ` (${String(cause)})`}`,
    });
    return undefined;
  }
  try {
    // The killed child's epoch ends here: its runs are recoverable without waiting out its lease.
    await log.holdLease({ hostId: TORTURE_HOST_ID });
    const catalog = tortureCatalog({ ledger: files.ledger });
    const check = async (phase: CheckPhase, since: number) => {
      const snapshot = await takeSnapshot(log, since);
      const result = checkInvariants(snapshot, readLedger(files.ledger), phase);
      tally.invariantsChecked += result.checked;
      tally.violations.push(...result.violations.map((v) => ({ ...v, detail: `${name}: ${v.detail}` })));
      return snapshot;
    };
    const afterKill = await check('after_kill', files.since);
    tally.reconciled += (await recoverLog(log, afterKill, catalog)).reconciled;
    const afterRecovery = await check('after_recovery', files.since);
    return afterRecovery.events.at(-1)?.sequence ?? 0;
  } finally {
    await log.close();
  }
}

/** Counts what a child said on stderr: where it died, and errors it did not expect. */
export function countChildErrors(tally: TortureTally, stderr: string): void {
  for (const line of stderr.split('\n')) {
    if (line.trim() === '') continue;
    let key = 'unparsed stderr';
    try {
      const parsed = JSON.parse(line) as {
        code?: unknown;
        message?: unknown;
        died?: unknown;
        opening?: unknown;
        opened?: unknown;
        runs?: unknown;
        stopped?: unknown;
        paused?: unknown;
        t1batch?: unknown;
        hosting?: unknown;
      };
      if (parsed.hosting === true || (parsed as { runFailed?: unknown }).runFailed !== undefined) continue;
      if (parsed.t1batch === true) {
        tally.faults.t1_batches_signalled = (tally.faults.t1_batches_signalled ?? 0) + 1;
        continue;
      }
      if (parsed.opening === true || parsed.opened === true) continue;
      if (parsed.runs !== undefined || parsed.stopped === true || parsed.paused === true) continue;
      if (typeof parsed.died === 'string') {
        tally.diedAt[parsed.died] = (tally.diedAt[parsed.died] ?? 0) + 1;
        continue;
      }
      key = `${String(parsed.code)}: ${String(parsed.message).slice(0, 160)}`;
    } catch {
      key = line.slice(0, 160);
    }
    tally.childErrors[key] = (tally.childErrors[key] ?? 0) + 1;
  }
}

async function freshLog(
  store: TortureStore,
  directory: string,
  generation: number,
  sessions: number,
): Promise<LogFiles> {
  const ports: number[] = [];
  for (let i = 0; i < sessions; i += 1) ports.push(await freePort());
  return {
    log: await store.fresh(directory, generation),
    ledger: join(directory, `ledger-${generation}.jsonl`),
    sessions: ports.map((port, i) => ({ id: `s${i}`, port })),
    since: 0,
  };
}

/** A port free right now; the children of one log listen on it in turn. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
