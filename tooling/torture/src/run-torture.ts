import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Violation } from './check-invariants.js';
import { Random } from './child/random.js';
import { bundleChild } from './child-bundle.js';
import { runFleetWorker } from './fleet-worker.js';
import { postgresTortureStore, type StoreName, sqliteTortureStore } from './torture-store.js';
import { runWorker, type TortureTally } from './torture-worker.js';

/** Options of a torture run. */
export type TortureOptions = {
  readonly kills: number;
  /** Children running at once (default 2: one per core here). */
  readonly workers?: number;
  readonly seed?: number;
  /** Sessions each child drives at once, so group commits hold several writes (default 2). */
  readonly sessions?: number;
  /** Kills per log file before a fresh one is started (default 10). */
  readonly rotateEvery?: number;
  /**
   * Hosts sharing one log (default 1: the single-host mode). With 2 or more, each kill
   * is a round of that many host processes, one of them the victim (`runFleetWorker`).
   */
  readonly hosts?: number;
  /**
   * Partition mode: hosts on PostgreSQL (at least 2; default 3), each behind its own
   * `FaultProxy` that stalls, holds answers and cuts at random and at T1 commits; 3 s leases.
   */
  readonly partition?: boolean;
  /** Where the logs live (default SQLite files). */
  readonly store?: StoreName;
  /** For `store: 'postgres'`: a server whose role may create databases (one per log). */
  readonly postgresUrl?: string;
  /** Keep the logs and ledgers (default: removed after a run with no violation). */
  readonly keep?: boolean;
  /** Called after each kill has been checked, with the kills and violations so far. */
  readonly onProgress?: (progress: { kills: number; violations: number; seconds: number }) => void;
};

/** What a torture run found; `violations` lists every broken promise. */
export type TortureSummary = {
  readonly kills: number;
  readonly invariantsChecked: number;
  readonly violations: readonly Violation[];
  readonly seconds: number;
  readonly seed: number;
  readonly workers: number;
  readonly hosts: number;
  readonly store: StoreName;
  readonly byPoint: Readonly<Record<string, number>>;
  readonly diedAt: Readonly<Record<string, number>>;
  readonly childErrors: Readonly<Record<string, number>>;
  readonly reconciled: number;
  readonly portRetries: number;
  readonly partition: boolean;
  readonly faults: Readonly<Record<string, number>>;
  readonly effectsJudged: number;
  readonly directory: string;
};

/**
 * Kills `kills` real engine processes at random points (inside group commits, between
 * T1 and the effect, between the effect and T2, mid model stream, mid Code mode cell,
 * mid handoff commit, during a new log's first open, at random moments) and checks the
 * promise after every kill, on SQLite files or on PostgreSQL databases.
 */
export async function runTorture(options: TortureOptions): Promise<TortureSummary> {
  const started = performance.now();
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const workers = Math.max(1, options.workers ?? 2);
  const directory = mkdtempSync(join(tmpdir(), 'factum-torture-'));
  const random = new Random(seed);
  const partition = options.partition === true;
  const storeName = options.store ?? (partition ? 'postgres' : 'sqlite');
  if (partition && storeName !== 'postgres')
    throw new Error('the partition mode runs on PostgreSQL: a proxy sits between each host and the server');
  if (storeName === 'postgres' && !options.postgresUrl)
    throw new Error('a PostgreSQL torture run needs `postgresUrl`');
  const store = storeName === 'postgres' ? postgresTortureStore(options.postgresUrl!) : sqliteTortureStore();
  const childEntry = await bundleChild(directory);
  const tally: TortureTally = {
    kills: 0,
    invariantsChecked: 0,
    violations: [],
    byPoint: {},
    diedAt: {},
    childErrors: {},
    reconciled: 0,
    portRetries: 0,
    faults: {},
    effectsJudged: 0,
  };
  let remaining = options.kills;
  const budget = { take: () => remaining-- > 0 };
  const keep = (): boolean => options.keep === true || tally.violations.length > 0;
  const hosts = partition ? Math.max(2, options.hosts ?? 3) : (options.hosts ?? 1);
  const onKill = () =>
    options.onProgress?.({
      kills: tally.kills,
      violations: tally.violations.length,
      seconds: (performance.now() - started) / 1000,
    });
  try {
    if (hosts >= 2) {
      // One shared log at a time: its hosts already fill the machine's cores.
      await runFleetWorker({
        directory: join(directory, 'fleet'),
        childEntry,
        random,
        store,
        budget,
        tally,
        hosts,
        sessions: options.sessions ?? 2,
        rotateEvery: options.rotateEvery ?? 10,
        partition,
        onKill,
      });
    } else
      await Promise.all(
        Array.from({ length: workers }, (_, index) =>
          runWorker({
            directory: join(directory, `worker-${index}`),
            childEntry,
            random: new Random(Math.floor(random.next() * 2 ** 32)),
            store,
            budget,
            tally,
            sessions: options.sessions ?? 2,
            rotateEvery: options.rotateEvery ?? 10,
            onKill,
          }),
        ),
      );
  } finally {
    await store.dispose(keep());
  }
  if (!keep()) rmSync(directory, { recursive: true, force: true });
  return {
    ...tally,
    seconds: (performance.now() - started) / 1000,
    seed,
    workers: hosts >= 2 ? 1 : workers,
    hosts,
    store: storeName,
    partition,
    directory,
  };
}
