import {
  canonicalJson,
  EventWrite,
  type Fact,
  factNeedsResult,
  type Invocation,
  RuntimeEvent,
  ToolResult,
} from '@factum/agent-facts';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { anyEvent, factArbitraries } from '../../agent-facts/test/property-arbitraries.ts';
import { EventLog } from '../src/index.ts';
import { bounds, temporaryDirectory } from './support/facts.ts';

type Written = { event: RuntimeEvent; result?: unknown };

const opened: Fact = {
  kind: 'invocation_opened',
  input: { kind: 'message', content: 'prelude', sourceMessages: [] },
};

/** What the log must hold before `fact` for its rules to accept it. */
function prelude(fact: Fact): Fact[] {
  const dispatch = (operationId: string): Fact => ({
    kind: 'tool_dispatched',
    operationId,
    call: { id: 'c', name: 'n', input: null, origin: { kind: 'provider', stepId: 's' } },
  });
  // A fork is its session's first fact; its source is written by `forkSource`.
  if (fact.kind === 'session_forked') return [];
  const before: Fact[] = fact.kind === 'invocation_opened' ? [] : [opened];
  if (fact.kind === 'tool_dispatched' && fact.call.origin.kind !== 'provider') {
    before.push(dispatch(fact.call.origin.parentOperationId));
  }
  if (
    fact.kind === 'tool_notified' ||
    fact.kind === 'tool_settled' ||
    fact.kind === 'tool_reconciled' ||
    fact.kind === 'tool_redispatched'
  ) {
    before.push(dispatch(fact.operationId));
  }
  const request = (operationId: string, inputDigest = `sha256:${'0'.repeat(64)}`): Fact => ({
    kind: 'approval_requested',
    operationId,
    call: { id: 'c', name: 'n', input: null, origin: { kind: 'provider', stepId: 's' } },
    inputDigest,
    reason: 'r',
    // Past, so that an `expired` decision is true by the database's clock.
    expiresAt: '2000-01-01T00:00:00.000Z',
  });
  if (fact.kind === 'approval_decided') before.push(request(fact.operationId, fact.inputDigest));
  if (fact.kind === 'invocation_ended' && fact.outcome.kind === 'approval_pending') {
    for (const operationId of new Set(fact.outcome.operations)) before.push(request(operationId));
  }
  return before;
}

/**
 * A fork names a real boundary of a session of the log: one is written beside the fork's
 * session (opened and ended) and the generated fact points at its end.
 */
async function forkSource(log: EventLog, generated: Fact, invocation: Invocation): Promise<Fact> {
  if (generated.kind !== 'session_forked') return generated;
  const source = { ...invocation, sessionId: `${invocation.sessionId}-source` };
  for (const fact of [opened, { kind: 'invocation_ended', outcome: { kind: 'completed' } } satisfies Fact]) {
    await log.append(EventWrite.plain(RuntimeEvent.create(source, fact)));
  }
  const { step: _step, ...rest } = generated;
  return { ...rest, source: (await log.forkPoint(source.sessionId)).source };
}

/** The fact as the store can hold it: a success points at the result it carries. */
function withResult(generated: Fact, value: unknown): { fact: Fact; result?: ToolResult } {
  const fact = resolvedByOperator(generated);
  // The log takes attempts in order: the first re-dispatch after a dispatch is attempt 2.
  if (fact.kind === 'tool_redispatched') return { fact: { ...fact, attempt: 2 } };

  if (!factNeedsResult(fact)) return { fact };
  const result = ToolResult.of(value);
  if (fact.kind === 'tool_settled') {
    return { fact: { ...fact, outcome: { kind: 'succeeded', result: result.reference() } }, result };
  }
  if (fact.kind === 'tool_reconciled') {
    return { fact: { ...fact, decision: { kind: 'succeeded', result: result.reference() } }, result };
  }
  return { fact };
}

/** An operator names who and why, and settles the operation (no `unknown`, no attempt). */
function resolvedByOperator(fact: Fact): Fact {
  if (fact.kind !== 'tool_reconciled' || fact.policy !== 'operator') return fact;
  const { attempt: _attempt, ...rest } = fact;
  const decision = fact.decision.kind === 'unknown' ? { kind: 'not_run' as const } : fact.decision;
  return { ...rest, by: fact.by ?? 'ada', note: fact.note?.trim() ? fact.note : 'why', decision };
}

function acceptable(fact: Fact, invocation: Invocation): boolean {
  if (fact.kind === 'tool_dispatched' && fact.call.origin.kind !== 'provider') {
    return fact.call.origin.parentOperationId !== fact.operationId;
  }
  if (fact.kind === 'invocation_ended' && fact.outcome.kind === 'handoff_paused') {
    return fact.outcome.pause.intent.successorInvocationId !== invocation.invocationId;
  }
  return true;
}

describe('the store keeps every fact byte-identically (properties)', () => {
  it.each(Object.keys(factArbitraries))(
    'every %s fact reads back with the same canonical bytes, before and after reopen',
    async (kind) => {
      using dir = temporaryDirectory();
      let log = await EventLog.open(dir.file);
      const written: Written[] = [];
      let session = 0;
      await fc.assert(
        fc.asyncProperty(
          anyEvent,
          factArbitraries[kind as keyof typeof factArbitraries],
          fc.jsonValue({ maxDepth: 2 }),
          async (base, generated, value) => {
            const invocation = { ...base.invocation, sessionId: `p${session++}` };
            fc.pre(acceptable(generated, invocation));
            for (const fact of prelude(generated)) {
              await log.append(EventWrite.plain(RuntimeEvent.create(invocation, fact)));
            }
            const { fact, result } = withResult(await forkSource(log, generated, invocation), value);
            // Generated ids may repeat across runs; one log holds each id once.
            const event = { ...base, id: `event-${session}`, invocation, fact };
            const write = result ? EventWrite.withResult(event, result) : EventWrite.plain(event);
            await log.append(write);
            const stored = (await log.scopedPrefix({ session: invocation.sessionId }, bounds)).events.at(-1)!;
            expect(canonicalJson(stored.event)).toBe(canonicalJson(event));
            if (result) {
              expect(
                canonicalJson((await log.resolveToolResult(invocation.sessionId, event.id)).json()),
              ).toBe(result.text());
            }
            written.push({ event, ...(result ? { result: result.json() } : {}) });
          },
        ),
        { numRuns: 60 },
      );
      await log.close();

      // The bytes in the row are the canonical bytes, and a reopened log reads the same.
      const raw = new Database(dir.file, { readonly: true });
      const body = raw.prepare('select body from events where event_id = ? and session_id = ?');
      for (const { event } of written) {
        const row = body.get(event.id, event.invocation.sessionId) as { body: string };
        expect(row.body).toBe(canonicalJson(event));
      }
      raw.close();
      log = await EventLog.open(dir.file);
      for (const { event, result } of written) {
        const events = (await log.scopedPrefix({ session: event.invocation.sessionId }, bounds)).events;
        expect(canonicalJson(events.at(-1)!.event)).toBe(canonicalJson(event));
        if (result !== undefined) {
          const stored = await log.resolveToolResult(event.invocation.sessionId, event.id);
          expect(canonicalJson(stored.json())).toBe(canonicalJson(result));
        }
      }
      expect(await log.verifyChain()).toMatchObject({ ok: true });
      await log.close();
    },
    60_000,
  );

  // Regression: the log stores the canonical bytes of the event as written, but reads
  // it back through z.json(), which drops an own key named __proto__.
  it('a tool input with a key named __proto__ reads back with the bytes it was stored with', async () => {
    using dir = temporaryDirectory();
    const log = await EventLog.open(dir.file);
    const at = { sessionId: 's', turnId: 't', runId: 'r', invocationId: 'i' };
    await log.append(EventWrite.plain(RuntimeEvent.create(at, opened)));
    const input = JSON.parse('{"__proto__":{"admin":true},"value":1}');
    const event = RuntimeEvent.create(at, {
      kind: 'tool_dispatched',
      operationId: 'step:c1',
      call: { id: 'c1', name: 'open', input: null, origin: { kind: 'provider', stepId: 'step' } },
    });
    const write = {
      ...event,
      fact: { ...event.fact, call: { ...(event.fact as { call: object }).call, input } },
    };
    await log.append(EventWrite.plain(write as RuntimeEvent));
    const raw = new Database(dir.file, { readonly: true });
    const row = raw.prepare('select body from events where event_id = ?').get(event.id) as { body: string };
    raw.close();
    const read = (await log.scopedPrefix({ session: 's' }, bounds)).events.at(-1)!.event;
    expect(canonicalJson(read)).toBe(row.body);
    await log.close();
  });
});
