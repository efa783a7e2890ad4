import type { Fact, RuntimeEvent } from '@factum/agent-facts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../src/context-projection.ts';
import { parkedRunOf, waitingParkedRun } from '../src/parked-run.ts';

// The waiting parked run was found by reading each parked run in turn, latest first, two
// passes over the history each. It must be the run that search finds (written out below
// as it was), in any history: calls asked about by one run and carried out by another,
// runs parked on calls they never asked about, calls reconciled as unknown or not.

function searchEachRun(events: readonly SessionEvent[]) {
  const candidates = new Set<string>();
  for (const { event } of events) {
    const fact = event.fact;
    if (fact.kind === 'invocation_ended' && fact.outcome.kind === 'approval_pending') {
      candidates.add(event.invocation.invocationId);
    }
  }
  for (const invocationId of [...candidates].reverse()) {
    const parked = parkedRunOf(events, invocationId);
    if (parked?.operations.some((operation) => operation.state === 'waiting')) return parked;
  }
  return undefined;
}

const operation = fc.nat({ max: 5 }).map((n) => `op${n}`);
const step = fc.record({
  invocation: fc.nat({ max: 4 }).map((n) => `i${n}`),
  fact: fc.oneof(
    fc.record({ kind: fc.constant('asked' as const), operation }),
    fc.record({ kind: fc.constant('decided' as const), operation }),
    fc.record({
      kind: fc.constant('parked' as const),
      operations: fc.uniqueArray(operation, { minLength: 1, maxLength: 3 }),
    }),
    fc.record({
      kind: fc.constantFrom('dispatched', 'settled', 'rejected', 'reconciled', 'unknown'),
      operation,
    }),
  ),
});

type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;

function historyOf(steps: readonly Step[]): SessionEvent[] {
  const call = { id: 'c', name: 'deploy', input: {}, origin: { kind: 'provider' as const, stepId: 's' } };
  const digest = 'sha256:input';
  return steps.map(({ invocation, fact: made }, index) => {
    const fact = ((): Fact => {
      switch (made.kind) {
        case 'asked':
          return {
            kind: 'approval_requested',
            operationId: made.operation,
            call,
            inputDigest: digest,
            reason: 'r',
          };
        case 'decided':
          return {
            kind: 'approval_decided',
            operationId: made.operation,
            decision: 'approved',
            inputDigest: digest,
            by: 'p',
          };
        case 'parked':
          return {
            kind: 'invocation_ended',
            outcome: { kind: 'approval_pending', operations: made.operations },
          };
        case 'dispatched':
          return { kind: 'tool_dispatched', operationId: made.operation, call };
        case 'settled':
          return {
            kind: 'tool_settled',
            operationId: made.operation,
            outcome: { kind: 'failed', error: { code: 'x', message: 'x' } },
          };
        case 'rejected':
          return {
            kind: 'tool_rejected',
            operationId: made.operation,
            call: { kind: 'provider', stepId: 's', callId: 'c' },
            name: 'deploy',
            input: {},
            reason: { kind: 'cancelled' },
          };
        case 'reconciled':
          return {
            kind: 'tool_reconciled',
            operationId: made.operation,
            policy: 'reconcile',
            decision: { kind: 'not_run' },
          };
        default:
          return {
            kind: 'tool_reconciled',
            operationId: made.operation,
            policy: 'reconcile',
            decision: { kind: 'unknown', note: 'cannot tell' },
          };
      }
    })();
    const event = {
      id: `e${index}`,
      invocation: { sessionId: 's', turnId: invocation, runId: invocation, invocationId: invocation },
      timestamp: new Date(0).toISOString(),
      fact,
    } as RuntimeEvent;
    return { sequence: index + 1, event };
  });
}

describe('the waiting parked run (property)', () => {
  it('is the one a search of each parked run, latest first, finds', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const events = historyOf(steps);
        expect(waitingParkedRun(events)).toEqual(searchEachRun(events));
      }),
      { numRuns: 2000 },
    );
  });

  it('finds a waiting run behind runs whose calls were all carried out', () => {
    const steps = [
      ...Array.from({ length: 5 }, (_, n) => [
        { invocation: `i${n}`, fact: { kind: 'asked' as const, operation: `op${n}` } },
        { invocation: `i${n}`, fact: { kind: 'parked' as const, operations: [`op${n}`] } },
      ]).flat(),
      ...[1, 2, 3, 4].map((n) => ({
        invocation: 'i9',
        fact: { kind: 'settled' as const, operation: `op${n}` },
      })),
    ];
    expect(waitingParkedRun(historyOf(steps))?.invocation.invocationId).toBe('i0');
  });
});
