import { describe, expect, it } from 'vitest';
import { runTorture } from '../src/run-torture.ts';

describe('torture smoke', () => {
  it('30 SIGKILLs at random points: nothing runs twice, nothing succeeds unrecorded, nothing is forgotten', async () => {
    const summary = await runTorture({ kills: 30, workers: 2, seed: 20_261_130 });
    expect(summary.violations).toEqual([]);
    expect(summary.kills).toBe(30);
    // Every kill is followed by two rounds of checks over the log and the ledger.
    expect(summary.invariantsChecked).toBeGreaterThan(30 * 2);
  });
});
