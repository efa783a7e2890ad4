import { describe, expect, it } from 'vitest';
import { runTorture } from '../src/run-torture.ts';

/** The violations, rule first, as the failure's message: a cut log still says which. */
function named(summary: {
  violations: readonly { rule: string; detail: string }[];
  directory: string;
  seed: number;
}): string {
  const rules = summary.violations.map((v) => `${v.rule}: ${v.detail.slice(0, 300)}`).join(' ; ');
  return `seed ${summary.seed}, logs kept in ${summary.directory}: ${rules}`;
}

describe('torture smoke', () => {
  it('30 SIGKILLs at random points on SQLite: nothing runs twice, nothing succeeds unrecorded, nothing is forgotten', async () => {
    const summary = await runTorture({ kills: 30, workers: 2, seed: 20_261_130 });
    expect(summary.violations, named(summary)).toEqual([]);
    expect(summary.kills).toBe(30);
    // Every kill is followed by two rounds of checks over the log and the ledger.
    expect(summary.invariantsChecked).toBeGreaterThan(30 * 2);
  });

  it('SIGKILLs at random points on PostgreSQL, first opens included: the same promise holds', async () => {
    // The package's vitest setup names a server (an embedded one on a fresh machine).
    const postgresUrl = process.env.FACTUM_TEST_POSTGRES_URL;
    expect(postgresUrl, 'a PostgreSQL server for the smoke run').toBeTruthy();
    const summary = await runTorture({
      kills: 16,
      workers: 2,
      seed: 20_261_201,
      store: 'postgres',
      postgresUrl,
    });
    expect(summary.violations, named(summary)).toEqual([]);
    expect(summary.kills).toBe(16);
    expect(summary.byPoint.open ?? 0).toBeGreaterThan(0);
    expect(summary.invariantsChecked).toBeGreaterThan(16 * 2);
  });

  it('three hosts on one SQLite log, one killed or paused per round: survivors sweep its runs, none of theirs is ended, nothing runs twice', async () => {
    const summary = await runTorture({ kills: 4, hosts: 3, seed: 9 });
    expect(summary.violations, named(summary)).toEqual([]);
    expect(summary.kills).toBe(4);
    expect(summary.hosts).toBe(3);
    expect(
      Object.keys(summary.byPoint).some((point) => point.startsWith('lease:') || point === 'pause'),
    ).toBe(true);
  }, 240_000);

  it('three hosts on one PostgreSQL database, lease kill points included: the same promise holds', async () => {
    const postgresUrl = process.env.FACTUM_TEST_POSTGRES_URL;
    expect(postgresUrl, 'a PostgreSQL server for the smoke run').toBeTruthy();
    const summary = await runTorture({ kills: 4, hosts: 3, seed: 3, store: 'postgres', postgresUrl });
    expect(summary.violations, named(summary)).toEqual([]);
    expect(summary.kills).toBe(4);
    expect(summary.byPoint['lease:sweep'] ?? 0).toBeGreaterThan(0);
  }, 240_000);

  it('three hosts on PostgreSQL, each behind a network that stalls, holds answers and cuts, at T1 commits too: no effect starts outside its lease, the same promise holds', async () => {
    const postgresUrl = process.env.FACTUM_TEST_POSTGRES_URL;
    expect(postgresUrl, 'a PostgreSQL server for the smoke run').toBeTruthy();
    const summary = await runTorture({ kills: 2, hosts: 3, partition: true, seed: 5, postgresUrl });
    expect(summary.violations, named(summary)).toEqual([]);
    expect(summary.kills).toBe(2);
    expect(summary.store).toBe('postgres');
    expect(summary.partition).toBe(true);
    const faults = (prefix: string) =>
      ['stall', 'hold_answers', 'cut'].reduce(
        (sum, fault) => sum + (summary.faults[`${prefix}${fault}`] ?? 0),
        0,
      );
    // The networks failed at random and at the commits of T1s.
    expect(faults('')).toBeGreaterThan(0);
    expect(faults('t1:')).toBeGreaterThan(0);
    // Effects were judged against the leases PostgreSQL committed (effect_within_lease).
    expect(summary.effectsJudged).toBeGreaterThan(0);
    expect(summary.invariantsChecked).toBeGreaterThan(2 * 2);
  }, 120_000);
});
