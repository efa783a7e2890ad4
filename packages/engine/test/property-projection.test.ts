import { EventWrite, type Fact, type Invocation, RuntimeEvent, ToolResult } from '@factum/agent-facts';
import { EventLog } from '@factum/event-log';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { projectMessages } from '../src/index.ts';
import { temporaryDirectory } from './support/agent-loop.ts';

const bounds = { maxEvents: 100_000, maxBytes: 64 * 1024 * 1024 };

/** What became of one tool call the model asked for. */
const fate = fc.constantFrom(
  'succeeded',
  'failed',
  'rejected',
  'uncertain',
  'reconciled_succeeded',
  'reconciled_failed',
  'reconciled_unknown',
  'never_dispatched',
);
const call = fc.record({ fate, value: fc.jsonValue({ maxDepth: 2 }) });
const step = fc.record({
  text: fc.option(fc.string({ maxLength: 12 })),
  calls: fc.array(call, { maxLength: 3 }),
});
const invocationPlan = fc.record({
  content: fc.string({ maxLength: 20 }),
  // A continuation names an earlier invocation (by index) and a point inside its events.
  continuation: fc.option(fc.record({ from: fc.nat(), cut: fc.nat() })),
  steps: fc.array(step, { maxLength: 3 }),
});

type Stored = { sequence: number; event: RuntimeEvent };
type Plan = typeof invocationPlan extends fc.Arbitrary<infer T> ? T : never;

/** Writes a session's history as the engine and recovery would, and keeps what it wrote. */
async function writeHistory(log: EventLog, plans: readonly Plan[]) {
  const written: Stored[] = [];
  const results = new Map<string, unknown>();
  const append = async (at: Invocation, fact: Fact, result?: ToolResult) => {
    const event = RuntimeEvent.create(at, fact);
    const stored = await log.append(result ? EventWrite.withResult(event, result) : EventWrite.plain(event));
    if (result) results.set(event.id, result.json());
    written.push(stored);
  };
  const ids: Invocation[] = [];
  for (const [index, plan] of plans.entries()) {
    const at = { sessionId: 'session', turnId: `t${index}`, runId: `r${index}`, invocationId: `i${index}` };
    const earlier = plan.continuation && index > 0 ? ids[plan.continuation.from % index]! : undefined;
    if (earlier) {
      const own = written.filter((stored) => stored.event.invocation.invocationId === earlier.invocationId);
      const cut = own[plan.continuation!.cut % own.length]!;
      const source = { invocation: earlier, highWater: cut.sequence, digest: 'sha256:cut' };
      await append(at, { kind: 'invocation_opened', input: { kind: 'continuation', source } });
    } else {
      await append(at, {
        kind: 'invocation_opened',
        input: { kind: 'message', content: plan.content, sourceMessages: [] },
      });
    }
    ids.push(at);
    for (const [s, planned] of plan.steps.entries()) {
      const stepId = `${at.invocationId}/${s}`;
      const parts = [
        ...(planned.text === null ? [] : [{ kind: 'text' as const, text: planned.text }]),
        ...planned.calls.map((_, c) => ({
          kind: 'tool_call' as const,
          call: { id: `c${c}`, name: 'echo', input: { c } },
        })),
      ];
      await append(at, {
        kind: 'model_completed',
        stepId,
        output: { parts, finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } },
      });
      for (const [c, { fate, value }] of planned.calls.entries()) {
        const operationId = `${stepId}:c${c}`;
        if (fate === 'never_dispatched') continue;
        if (fate === 'rejected') {
          await append(at, {
            kind: 'tool_rejected',
            operationId,
            call: { kind: 'provider', stepId, callId: `c${c}` },
            name: 'echo',
            input: { c },
            reason: { kind: 'cancelled' },
          });
          continue;
        }
        await append(at, {
          kind: 'tool_dispatched',
          operationId,
          call: { id: `c${c}`, name: 'echo', input: { c }, origin: { kind: 'provider', stepId } },
        });
        const result = ToolResult.of(value);
        const error = { code: 'boom', message: 'it failed' };
        if (fate === 'succeeded') {
          await append(
            at,
            { kind: 'tool_settled', operationId, outcome: { kind: 'succeeded', result: result.reference() } },
            result,
          );
        } else if (fate === 'failed') {
          await append(at, { kind: 'tool_settled', operationId, outcome: { kind: 'failed', error } });
        } else if (fate === 'reconciled_succeeded') {
          const decision = { kind: 'succeeded' as const, result: result.reference() };
          await append(at, { kind: 'tool_reconciled', operationId, policy: 'reconcile', decision }, result);
        } else if (fate === 'reconciled_failed') {
          await append(at, {
            kind: 'tool_reconciled',
            operationId,
            policy: 'reconcile',
            decision: { kind: 'failed', error },
          });
        } else if (fate === 'reconciled_unknown') {
          const decision = { kind: 'unknown' as const, note: 'cannot tell' };
          await append(at, { kind: 'tool_reconciled', operationId, policy: 'reconcile', decision });
        }
      }
    }
    await append(at, { kind: 'invocation_ended', outcome: { kind: 'completed' } });
  }
  return { written, results, ids };
}

describe('the next prompt is a projection of the log alone (properties)', () => {
  it('projectMessages over a log equals the projection of what was written, and of the same log after reopen', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(invocationPlan, { minLength: 1, maxLength: 4 }), async (plans) => {
        using dir = temporaryDirectory();
        let log = await EventLog.open(dir.file);
        const { written, results, ids } = await writeHistory(log, plans);
        const fromLog = (reader: EventLog) => async (invocationId: string) =>
          projectMessages(
            (await reader.scopedPrefix({ session: 'session' }, bounds)).events,
            invocationId,
            async (eventId) => (await reader.resolveToolResult('session', eventId)).json(),
          );
        const expected = await Promise.all(
          ids.map(({ invocationId }) =>
            projectMessages(written, invocationId, async (eventId) => results.get(eventId)),
          ),
        );
        const before = await Promise.all(ids.map(({ invocationId }) => fromLog(log)(invocationId)));
        expect(before).toEqual(expected);
        await log.close();
        log = await EventLog.open(dir.file);
        const after = await Promise.all(ids.map(({ invocationId }) => fromLog(log)(invocationId)));
        expect(after).toEqual(expected);
        await log.close();
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});
