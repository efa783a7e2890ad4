import { type Fact, type Invocation, RuntimeEvent, ToolResult } from '@factum/agent-facts';
import fc from 'fast-check';
import type { SessionEvent } from '../src/context-projection.ts';

// Random session histories for the projections' property tests: calls closed by later
// invocations (a parked call carried out by its continuation), operators reconciling old
// calls, continuations cut inside their source, an invocation id opened twice, and runs
// ending completed, paused for a handoff or parked on approvals, and forks.

export const action = fc.oneof(
  fc.record({ kind: fc.constant('open' as const), content: fc.string({ maxLength: 6 }) }),
  fc.record({ kind: fc.constant('continue' as const), from: fc.nat(), cut: fc.nat() }),
  fc.record({ kind: fc.constant('reopen' as const), from: fc.nat() }),
  fc.record({
    kind: fc.constant('step' as const),
    text: fc.option(fc.string({ maxLength: 6 }), { nil: undefined }),
    calls: fc.nat({ max: 3 }),
  }),
  fc.record({
    kind: fc.constant('outcome' as const),
    operation: fc.nat(),
    fate: fc.constantFrom(
      'dispatched',
      'succeeded',
      'failed',
      'rejected',
      'reconciled',
      'unknown',
      'not_run',
    ),
  }),
  fc.record({ kind: fc.constant('end' as const) }),
);

/**
 * Besides `action`: a run's end as a handoff pause (for one of the invocations opened,
 * or a new one) or parked on approvals, and a fork of the session.
 */
export const admissionAction = fc.oneof(
  { arbitrary: action, weight: 12 },
  { arbitrary: fc.record({ kind: fc.constant('pause' as const), successor: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('park' as const), operation: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('fork' as const), from: fc.nat() }), weight: 1 },
);

type Action = typeof admissionAction extends fc.Arbitrary<infer T> ? T : never;

/** Interprets actions as a session's events, with the results the settled calls stored. */
export function historyOf(actions: readonly Action[]) {
  const events: SessionEvent[] = [];
  const results = new Map<string, unknown>();
  const opened: Invocation[] = [];
  const operations: string[] = [];
  let current: Invocation | undefined;
  let steps = 0;
  const append = (fact: Fact, result?: ToolResult) => {
    const event = RuntimeEvent.create(current!, fact);
    if (result !== undefined) results.set(event.id, result.json());
    events.push({ sequence: events.length + 1, event });
  };
  const open = (invocationId: string) => {
    current = { sessionId: 's', turnId: invocationId, runId: invocationId, invocationId };
    opened.push(current);
  };
  for (const next of actions) {
    if (next.kind === 'open') {
      open(`i${opened.length}`);
      append({
        kind: 'invocation_opened',
        input: { kind: 'message', content: next.content, sourceMessages: [] },
      });
    } else if (next.kind === 'continue' && opened.length > 0) {
      const source = opened[next.from % opened.length]!;
      const own = events.filter((stored) => stored.event.invocation.invocationId === source.invocationId);
      const cut = own[next.cut % own.length]!.sequence;
      open(`i${opened.length}`);
      append({
        kind: 'invocation_opened',
        input: { kind: 'continuation', source: { invocation: source, highWater: cut, digest: 'sha256:cut' } },
      });
    } else if (next.kind === 'reopen' && opened.length > 0) {
      open(opened[next.from % opened.length]!.invocationId);
      append({ kind: 'invocation_opened', input: { kind: 'message', content: 'again', sourceMessages: [] } });
    } else if (next.kind === 'step' && current !== undefined) {
      steps += 1;
      const stepId = `${current.invocationId}/${steps}`;
      const calls = Array.from({ length: next.calls }, (_, c) => ({
        kind: 'tool_call' as const,
        call: { id: `c${c}`, name: 'echo', input: { c } },
      }));
      const parts = [
        ...(next.text === undefined ? [] : [{ kind: 'text' as const, text: next.text }]),
        ...calls,
      ];
      append({
        kind: 'model_completed',
        stepId,
        output: { parts, finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } },
      });
      for (let c = 0; c < next.calls; c += 1) operations.push(`${stepId}:c${c}`);
    } else if (next.kind === 'outcome' && current !== undefined && operations.length > 0) {
      const operationId = operations[next.operation % operations.length]!;
      const result = ToolResult.of({ operationId, at: events.length });
      const error = { code: 'boom', message: 'it failed' };
      if (next.fate === 'dispatched') {
        const call = {
          id: 'c0',
          name: 'echo',
          input: {},
          origin: { kind: 'provider' as const, stepId: 'x' },
        };
        append({ kind: 'tool_dispatched', operationId, call });
      } else if (next.fate === 'succeeded') {
        append(
          { kind: 'tool_settled', operationId, outcome: { kind: 'succeeded', result: result.reference() } },
          result,
        );
      } else if (next.fate === 'failed') {
        append({ kind: 'tool_settled', operationId, outcome: { kind: 'failed', error } });
      } else if (next.fate === 'rejected') {
        const call = { kind: 'provider' as const, stepId: 'x', callId: 'c0' };
        append({
          kind: 'tool_rejected',
          operationId,
          call,
          name: 'echo',
          input: {},
          reason: { kind: 'cancelled' },
        });
      } else if (next.fate === 'reconciled') {
        const decision = { kind: 'succeeded' as const, result: result.reference() };
        append({ kind: 'tool_reconciled', operationId, policy: 'reconcile', decision }, result);
      } else {
        const decision =
          next.fate === 'unknown'
            ? { kind: 'unknown' as const, note: 'cannot tell' }
            : { kind: 'not_run' as const };
        append({ kind: 'tool_reconciled', operationId, policy: 'reconcile', decision });
      }
    } else if (next.kind === 'end' && current !== undefined) {
      append({ kind: 'invocation_ended', outcome: { kind: 'completed' } });
    } else if (next.kind === 'pause' && current !== undefined) {
      const successorInvocationId = `i${next.successor % (opened.length + 1)}`;
      const intent = {
        handoffId: 'h',
        hostEpoch: 'e',
        rootRunId: current.runId,
        successorRunId: successorInvocationId,
        successorInvocationId,
        claimId: 'c',
      };
      const execution = { fingerprint: 'sha256:f', steps };
      append({ kind: 'invocation_ended', outcome: { kind: 'handoff_paused', pause: { intent, execution } } });
    } else if (next.kind === 'park' && current !== undefined && operations.length > 0) {
      const operationId = operations[next.operation % operations.length]!;
      append({ kind: 'invocation_ended', outcome: { kind: 'approval_pending', operations: [operationId] } });
    } else if (next.kind === 'fork' && opened.length > 0) {
      const source = opened[next.from % opened.length]!;
      current = { sessionId: 's', turnId: 'fork', runId: 'fork', invocationId: `fork${events.length}` };
      append({
        kind: 'session_forked',
        source: { invocation: source, highWater: events.length, digest: 'sha256:cut' },
      });
    }
  }
  const ids = [...new Set(opened.map((invocation) => invocation.invocationId)), 'unknown'];
  return { events, read: async (eventId: string) => results.get(eventId), ids };
}
