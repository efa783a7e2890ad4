import type { Fact, Invocation } from '@factum/agent-facts';
import type { InvocationRecovery, StoredEvent } from '@factum/event-log';
import { describe, expect, it } from 'vitest';
import { checkInvariants } from '../src/check-invariants.ts';
import type { LedgerEntry } from '../src/child/ledger.js';
import type { LogSnapshot } from '../src/log-snapshot.ts';

// The checks must be able to fail: each broken promise, written by hand into a log
// snapshot and a ledger, is reported under its rule.

const at: Invocation = { sessionId: 's', turnId: 't', runId: 'r', invocationId: 'i' };
const digest = `sha256:${'0'.repeat(64)}`;
const opened: Fact = {
  kind: 'invocation_opened',
  input: { kind: 'message', content: 'go', sourceMessages: [] },
};
const ended: Fact = { kind: 'invocation_ended', outcome: { kind: 'completed' } };
const dispatched = (op: string, key: string): Fact => ({
  kind: 'tool_dispatched',
  operationId: op,
  call: { id: op, name: 'charge', input: { key }, origin: { kind: 'provider', stepId: 'x' } },
});
const settled = (op: string): Fact => ({
  kind: 'tool_settled',
  operationId: op,
  outcome: { kind: 'succeeded', result: { digest, bytes: 2 } },
});
const reconciled = (op: string, kind: 'succeeded' | 'failed'): Fact => ({
  kind: 'tool_reconciled',
  operationId: op,
  policy: 'reconcile',
  decision:
    kind === 'succeeded'
      ? { kind, result: { digest, bytes: 2 } }
      : { kind, error: { code: 'not_applied', message: 'no' } },
});

function snapshot(
  facts: Fact[],
  options: { unfinished?: Invocation[]; uncertain?: string[]; chainOk?: boolean } = {},
): LogSnapshot {
  const events: StoredEvent[] = facts.map((fact, i) => ({
    sequence: i + 1,
    event: { id: `e${i}`, invocation: at, timestamp: new Date(0).toISOString(), fact },
  }));
  const recovery: InvocationRecovery = {
    uncertainOperations: options.uncertain ?? [],
    undispatchedCalls: [],
    ended: facts.some((fact) => fact.kind === 'invocation_ended'),
    attempts: {},
  };
  return {
    chain:
      options.chainOk === false
        ? {
            ok: false,
            events: 0,
            head: undefined,
            brokenAt: 1,
            reason: 'the global chain digest does not match',
          }
        : { ok: true, events: events.length, head: undefined },
    events,
    unfinished: options.unfinished ?? [],
    recoveries: new Map([['i', recovery]]),
  };
}

const ledger = (...keys: string[]) => ({
  entries: keys.map((key): LedgerEntry => ({ key, tool: 'charge', pid: 1 })),
  torn: [],
});
const rules = (result: ReturnType<typeof checkInvariants>) => result.violations.map((v) => v.rule).sort();

describe('the torture checks', () => {
  it('a clean history passes', () => {
    const result = checkInvariants(
      snapshot([opened, dispatched('o1', 'k1'), settled('o1'), ended]),
      ledger('k1'),
      'after_recovery',
    );
    expect(result.violations).toEqual([]);
    expect(result.checked).toBeGreaterThan(5);
  });

  it('an effect that ran twice breaks at_most_once', () => {
    const facts = [opened, dispatched('o1', 'k1'), settled('o1'), ended];
    expect(rules(checkInvariants(snapshot(facts), ledger('k1', 'k1'), 'after_kill'))).toEqual([
      'at_most_once',
    ]);
  });

  it('an effect with no dispatch breaks t1_before_effect', () => {
    expect(rules(checkInvariants(snapshot([opened, ended]), ledger('k9'), 'after_kill'))).toEqual([
      't1_before_effect',
    ]);
  });

  it('a success with no effect breaks no_fabricated_success', () => {
    const facts = [opened, dispatched('o1', 'k1'), settled('o1'), ended];
    expect(rules(checkInvariants(snapshot(facts), ledger(), 'after_kill'))).toEqual([
      'no_fabricated_success',
    ]);
  });

  it('a reconciliation that contradicts the ledger breaks no_fabricated_success', () => {
    const facts = [opened, dispatched('o1', 'k1'), ended, reconciled('o1', 'failed')];
    expect(rules(checkInvariants(snapshot(facts), ledger('k1'), 'after_kill'))).toEqual([
      'no_fabricated_success',
    ]);
  });

  it('an effect neither settled nor listed uncertain breaks never_forgotten', () => {
    const facts = [opened, dispatched('o1', 'k1'), ended];
    expect(rules(checkInvariants(snapshot(facts), ledger('k1'), 'after_kill'))).toEqual([
      'never_forgotten',
      'never_forgotten',
    ]);
    expect(
      checkInvariants(snapshot(facts, { uncertain: ['o1'] }), ledger('k1'), 'after_kill').violations,
    ).toEqual([]);
  });

  it('an invocation neither ended nor listed unfinished breaks invocations_accounted', () => {
    const facts = [opened, dispatched('o1', 'k1'), settled('o1')];
    expect(rules(checkInvariants(snapshot(facts), ledger('k1'), 'after_kill'))).toEqual([
      'invocations_accounted',
    ]);
    expect(
      checkInvariants(snapshot(facts, { unfinished: [at] }), ledger('k1'), 'after_kill').violations,
    ).toEqual([]);
  });

  it('an event after the end breaks sealed; a broken chain breaks digest_chain', () => {
    const facts = [opened, ended, dispatched('o1', 'k1'), settled('o1')];
    expect(rules(checkInvariants(snapshot(facts, { chainOk: false }), ledger('k1'), 'after_kill'))).toEqual([
      'digest_chain',
      'sealed',
      'sealed',
    ]);
  });

  describe('approvals', () => {
    const transferCall = (op: string, amount: number) => ({
      id: op,
      name: 'transfer',
      input: { key: 'k1', amount },
      origin: { kind: 'provider' as const, stepId: 'x' },
    });
    const requested = (op: string, amount: number): Fact => ({
      kind: 'approval_requested',
      operationId: op,
      call: transferCall(op, amount),
      inputDigest: digest,
      reason: 'transfer',
    });
    const decided = (op: string, decision: 'approved' | 'denied'): Fact => ({
      kind: 'approval_decided',
      operationId: op,
      decision,
      inputDigest: digest,
      by: 'torture',
    });
    const sent = (op: string, amount: number): Fact => ({
      kind: 'tool_dispatched',
      operationId: op,
      call: transferCall(op, amount),
    });
    const parked: Fact = {
      kind: 'invocation_ended',
      outcome: { kind: 'approval_pending', operations: ['o1'] },
    };
    const moved = (amount: number) => ({
      entries: [{ key: 'k1', tool: 'transfer', pid: 1, amount }],
      torn: [],
    });

    it('an approved transfer with its input passes; a decision after the end breaks no seal', () => {
      const facts = [
        opened,
        requested('o1', 5),
        decided('o1', 'approved'),
        sent('o1', 5),
        settled('o1'),
        ended,
      ];
      expect(checkInvariants(snapshot(facts), moved(5), 'after_kill').violations).toEqual([]);
      const waiting = [opened, requested('o1', 5), parked, decided('o1', 'denied')];
      expect(checkInvariants(snapshot(waiting), { entries: [], torn: [] }, 'after_kill').violations).toEqual(
        [],
      );
    });

    it('a denied or undecided call that ran, or another input than the approved one, breaks approved_only', () => {
      const denied = [
        opened,
        requested('o1', 5),
        decided('o1', 'denied'),
        sent('o1', 5),
        settled('o1'),
        ended,
      ];
      expect(rules(checkInvariants(snapshot(denied), moved(5), 'after_kill'))).toEqual([
        'approved_only',
        'approved_only',
      ]);
      const undecided = [opened, requested('o1', 5), sent('o1', 5), settled('o1'), ended];
      expect(rules(checkInvariants(snapshot(undecided), moved(5), 'after_kill'))).toEqual([
        'approved_only',
        'approved_only',
      ]);
      const altered = [
        opened,
        requested('o1', 5),
        decided('o1', 'approved'),
        sent('o1', 7),
        settled('o1'),
        ended,
      ];
      expect(rules(checkInvariants(snapshot(altered), moved(7), 'after_kill'))).toEqual([
        'approved_only',
        'approved_only',
      ]);
    });
  });

  describe('effect_within_lease', () => {
    const facts = [opened, dispatched('o1', 'k1'), settled('o1'), ended];
    const ran = (at: number, host = 'host-1', epoch = 1) => ({
      entries: [{ key: 'k1', tool: 'charge', pid: 1, host, epoch, at } satisfies LedgerEntry],
      torn: [],
    });
    // Registered at 1,000 with a 3 s lease, renewed at 2,000 (to 5,000), released at 6,000.
    const leases = [
      { hostId: 'host-1', epoch: 1, expiresAt: 4_000, recordedAt: 1_000 },
      { hostId: 'host-1', epoch: 1, expiresAt: 5_000, recordedAt: 2_000 },
      { hostId: 'host-1', epoch: 2, expiresAt: 9_000, recordedAt: 6_000 },
    ];
    const check = (ledger: ReturnType<typeof ran>, history = leases) =>
      checkInvariants(snapshot(facts), ledger, 'after_kill', history);

    it('an effect under a live lease passes, and is counted as checked', () => {
      const result = check(ran(4_500));
      expect(result.violations).toEqual([]);
      expect(result.checked).toBe(checkInvariants(snapshot(facts), ran(4_500), 'after_kill').checked + 1);
    });

    it('an effect after its epoch’s lease expired breaks it, naming the host, the time and the lease versions', () => {
      // Epoch 2 is live at 5,500, but the T1 and its effect belong to epoch 1, expired at 5,000.
      const result = check(ran(5_500));
      expect(rules(result)).toEqual(['effect_within_lease']);
      expect(result.violations[0]?.detail).toContain('host-1 (epoch 1)');
      expect(result.violations[0]?.detail).toContain('500 ms after its lease expired');
    });

    it('a renewal committed only after the effect does not cover it, though its expiry would', () => {
      // Committed at 4,200 (its answer held, say): the effect at 4,100 ran on the version
      // committed at 1,000, expired at 4,000.
      const late = [leases[0]!, { hostId: 'host-1', epoch: 1, expiresAt: 7_000, recordedAt: 4_200 }];
      expect(rules(check(ran(4_100), late))).toEqual(['effect_within_lease']);
      // A renewal the database committed counts, whether or not its answer reached the host.
      expect(check(ran(4_300), late).violations).toEqual([]);
    });

    it('an effect after a release, before any registration, or of an unknown host breaks it', () => {
      const released = [
        ...leases.slice(0, 2),
        { hostId: 'host-1', epoch: 1, expiresAt: 0, recordedAt: 3_000 },
      ];
      expect(rules(check(ran(3_500), released))).toEqual(['effect_within_lease']);
      expect(rules(check(ran(500)))).toEqual(['effect_within_lease']);
      expect(rules(check(ran(2_500, 'host-9')))).toEqual(['effect_within_lease']);
    });

    it('an effect with no host on its line (a single host’s) is not judged', () => {
      const result = checkInvariants(snapshot(facts), ledger('k1'), 'after_kill', leases);
      expect(result.violations).toEqual([]);
    });
  });
});
