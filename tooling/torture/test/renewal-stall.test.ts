import { describe, expect, it } from 'vitest';
import { STALL_TTLS, stalledRenewal } from '../src/renewal-stall.ts';

// The bound must be able to fail: a survivor stalled for SQLite's busy timeout (the
// defect the fleet found, 10.7–11.3 s gaps under a 2 s TTL) is a violation; a host
// starved of CPU for a few seconds is not.

const ttlMs = 2_000;
const survivor = { id: 'h1', role: 'survivor' as const, paused: false };

describe('a survivor whose lease renewals stalled', () => {
  it('is reported when it went the busy timeout without a renewal', () => {
    const stalled = stalledRenewal({ ...survivor, renewGapMs: 10_700 }, ttlMs);
    expect(stalled).toContain('h1 went 10700 ms without renewing its lease (TTL 2000 ms)');
  });

  it('is reported from the bound on', () => {
    expect(stalledRenewal({ ...survivor, renewGapMs: STALL_TTLS * ttlMs }, ttlMs)).toBeDefined();
    expect(stalledRenewal({ ...survivor, renewGapMs: STALL_TTLS * ttlMs - 1 }, ttlMs)).toBeUndefined();
  });

  it('is not reported for a lapse a loaded machine explains', () => {
    expect(stalledRenewal({ ...survivor, renewGapMs: 3_026 }, ttlMs)).toBeUndefined();
  });

  it('is not reported for a paused host, a victim, or a host that said no gap', () => {
    expect(stalledRenewal({ ...survivor, paused: true, renewGapMs: 30_000 }, ttlMs)).toBeUndefined();
    expect(stalledRenewal({ ...survivor, role: 'victim', renewGapMs: 30_000 }, ttlMs)).toBeUndefined();
    expect(stalledRenewal({ ...survivor, renewGapMs: undefined }, ttlMs)).toBeUndefined();
  });
});
