import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AdmissionIndex } from '../src/admission-index.ts';
import { lineage, type SessionEvent } from '../src/context-projection.ts';
import { admissionAction, historyOf } from './session-history.ts';

// Admission once scanned the whole history several times a run. Its index must answer
// as those scans do (written out below as they were), after any part of any history,
// however the history is fed to it.

function occupancyScan(events: readonly SessionEvent[]) {
  let live: string | null = null;
  let heldFor: string | null = null;
  for (const { event } of events) {
    const fact = event.fact;
    if (fact.kind === 'invocation_opened') {
      live = event.invocation.invocationId;
      heldFor = null;
    } else if (fact.kind === 'session_forked') {
      live = null;
      heldFor = null;
    } else if (fact.kind === 'invocation_ended') {
      live = null;
      heldFor =
        fact.outcome.kind === 'handoff_paused' ? fact.outcome.pause.intent.successorInvocationId : null;
    }
  }
  return { live, heldFor };
}

function uncertainScan(events: readonly SessionEvent[], invocationId: string): string[] {
  const members = new Set(lineage(events, invocationId).map((segment) => segment.invocationId));
  const open = new Set<string>();
  for (const { event } of events) {
    if (!members.has(event.invocation.invocationId)) continue;
    const fact = event.fact;
    if (fact.kind === 'tool_dispatched') open.add(fact.operationId);
    if (fact.kind === 'tool_settled') open.delete(fact.operationId);
    if (fact.kind === 'tool_reconciled' && fact.decision.kind !== 'unknown') open.delete(fact.operationId);
  }
  return [...open];
}

function expectSameAnswers(index: AdmissionIndex, seen: readonly SessionEvent[], ids: readonly string[]) {
  expect(index.occupancy()).toEqual(occupancyScan(seen));
  const lastOpened = [...seen].reverse().find(({ event }) => event.fact.kind === 'invocation_opened');
  expect(index.lastOpened()).toBe(lastOpened?.event.invocation.invocationId);
  const parked = seen.some(
    ({ event }) => event.fact.kind === 'invocation_ended' && event.fact.outcome.kind === 'approval_pending',
  );
  expect(index.hasParkedRun()).toBe(parked);
  for (const id of [...ids, ...seen.map(({ event }) => event.invocation.invocationId)]) {
    expect(index.has(id)).toBe(seen.some(({ event }) => event.invocation.invocationId === id));
    expect(index.uncertainIn(id)).toEqual(uncertainScan(seen, id));
  }
}

// Calls dispatched, settled and reconciled, across invocations, far more often than in
// the projections' own mix: they are what the index keeps apart.
const outcome = fc.record({
  kind: fc.constant('outcome' as const),
  operation: fc.nat(),
  fate: fc.constantFrom(
    'dispatched' as const,
    'succeeded' as const,
    'failed' as const,
    'reconciled' as const,
    'unknown' as const,
    'not_run' as const,
  ),
});
const history = fc.array(
  fc.oneof({ arbitrary: admissionAction, weight: 3 }, { arbitrary: outcome, weight: 2 }),
  { minLength: 1, maxLength: 60, size: 'max' },
);

describe('an admission index answers as the scans of the whole history do (properties)', () => {
  it('after every event, for every invocation', () => {
    fc.assert(
      fc.property(history, (actions) => {
        const { events, ids } = historyOf(actions);
        const index = new AdmissionIndex();
        for (let end = 1; end <= events.length; end += 1) {
          const seen = events.slice(0, end);
          index.feed(seen);
          expectSameAnswers(index, seen, ids);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('fed in chunks of any size', () => {
    fc.assert(
      fc.property(history, fc.array(fc.nat({ max: 8 }), { maxLength: 20 }), (actions, chunks) => {
        const { events, ids } = historyOf(actions);
        const index = new AdmissionIndex();
        let end = 0;
        for (const chunk of [...chunks, events.length]) {
          end = Math.min(events.length, end + chunk);
          index.feed(events.slice(0, end));
        }
        expect(index.fed).toBe(events.length);
        expect(index.last).toBe(events.at(-1));
        expectSameAnswers(index, events, ids);
      }),
      { numRuns: 300 },
    );
  });
});

describe('an admission index over a long session', () => {
  it('finds the one call left uncertain among a thousand settled ones', () => {
    const actions = Array.from({ length: 1_000 }, () => [
      { kind: 'open' as const, content: 'go' },
      { kind: 'step' as const, text: undefined, calls: 1 },
      { kind: 'outcome' as const, operation: Number.MAX_SAFE_INTEGER, fate: 'dispatched' as const },
      { kind: 'outcome' as const, operation: Number.MAX_SAFE_INTEGER, fate: 'succeeded' as const },
      { kind: 'end' as const },
    ]).flat();
    const { events } = historyOf(actions);
    const index = new AdmissionIndex();
    index.feed(events);
    expect(index.uncertainIn('i999')).toEqual([]);
    const { events: more } = historyOf([
      ...actions,
      { kind: 'open', content: 'go' },
      { kind: 'step', text: undefined, calls: 1 },
      { kind: 'outcome', operation: Number.MAX_SAFE_INTEGER, fate: 'dispatched' },
    ]);
    const fresh = new AdmissionIndex();
    fresh.feed(more);
    expect(fresh.uncertainIn('i1000')).toEqual(uncertainScan(more, 'i1000'));
    expect(fresh.uncertainIn('i1000')).toHaveLength(1);
    expect(fresh.occupancy()).toEqual({ live: 'i1000', heldFor: null });
  });
});
