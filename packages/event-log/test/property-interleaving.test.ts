import {
  canonicalJson,
  chainDigest,
  EventWrite,
  type Fact,
  type Invocation,
  RuntimeEvent,
  ToolResult,
} from '@factum/agent-facts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../src/index.ts';
import { bounds, temporaryDirectory } from './support/facts.ts';

/** One session's writes, in the order its writer issues them. */
function sessionWrites(invocation: Invocation, observations: number): EventWrite[] {
  const plain = (fact: Fact) => EventWrite.plain(RuntimeEvent.create(invocation, fact));
  const result = ToolResult.of({ session: invocation.sessionId });
  const writes = [
    plain({ kind: 'invocation_opened', input: { kind: 'message', content: 'go', sourceMessages: [] } }),
    ...Array.from({ length: observations }, (_, i) =>
      plain({ kind: 'model_observed', stepId: 's', observation: { kind: 'text_delta', text: `${i}` } }),
    ),
    plain({
      kind: 'tool_dispatched',
      operationId: 'op',
      call: { id: 'c', name: 'n', input: {}, origin: { kind: 'provider', stepId: 's' } },
    }),
    EventWrite.withResult(
      RuntimeEvent.create(invocation, {
        kind: 'tool_settled',
        operationId: 'op',
        outcome: { kind: 'succeeded', result: result.reference() },
      }),
      result,
    ),
    plain({ kind: 'invocation_ended', outcome: { kind: 'completed' } }),
  ];
  return writes;
}

/** How the driver moves on after issuing a write: wait for it, yield a turn, or not at all. */
const pacing = fc.constantFrom('await', 'yield', 'none');

describe('concurrent appends (properties)', () => {
  it('any interleaving of several sessions keeps a verifiable chain and each session in issue order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat({ max: 6 }), { minLength: 1, maxLength: 4 }),
        fc.array(fc.tuple(fc.nat(), pacing), { minLength: 1, maxLength: 120 }),
        fc.integer({ min: 1, max: 8 }),
        async (observationCounts, schedule, maxBatch) => {
          using dir = temporaryDirectory();
          const log = await EventLog.open(dir.file, { maxBatch });
          const queues = observationCounts.map((count, i) =>
            sessionWrites({ sessionId: `s${i}`, turnId: 't', runId: 'r', invocationId: `i${i}` }, count),
          );
          const issued = queues.map(() => [] as string[]);
          const pending: Promise<unknown>[] = [];
          const issue = (session: number) => {
            const write = queues[session]!.shift()!;
            issued[session]!.push(write.event.id);
            const commit = log.commit(write);
            pending.push(commit);
            return commit;
          };
          // The schedule picks which session writes next and how the writer paces itself;
          // whatever it leaves is written round robin at the end.
          for (const [pick, pace] of schedule) {
            const open = queues.flatMap((queue, i) => (queue.length > 0 ? [i] : []));
            if (open.length === 0) break;
            const commit = issue(open[pick % open.length]!);
            if (pace === 'await') await commit;
            if (pace === 'yield') await new Promise((resolve) => setImmediate(resolve));
          }
          while (queues.some((queue) => queue.length > 0)) {
            for (const [i, queue] of queues.entries()) if (queue.length > 0) issue(i);
          }
          await Promise.all(pending);

          const check = async (reader: EventLog) => {
            expect(await reader.verifyChain()).toMatchObject({ ok: true });
            const all = (await reader.prefix(bounds)).events;
            expect(all.map((stored) => stored.sequence)).toEqual(all.map((_, i) => i + 1));
            for (const [i, ids] of issued.entries()) {
              const scoped = await reader.scopedPrefix({ session: `s${i}` }, bounds);
              expect(scoped.events.map((stored) => stored.event.id)).toEqual(ids);
              // The global order agrees with the session's own order.
              const own = all.filter((stored) => stored.event.invocation.sessionId === `s${i}`);
              expect(own.map((stored) => stored.event.id)).toEqual(ids);
            }
            return all;
          };
          const before = await check(log);
          await log.close();
          const reopened = await EventLog.open(dir.file);
          const after = await check(reopened);
          expect(after.map((stored) => stored.event)).toEqual(before.map((stored) => stored.event));
          await reopened.close();
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);

  it("the session digest of a prefix is the chain over exactly that session's events", async () => {
    using dir = temporaryDirectory();
    const log = await EventLog.open(dir.file);
    const writes = [0, 1, 2].flatMap((i) =>
      sessionWrites({ sessionId: `s${i}`, turnId: 't', runId: 'r', invocationId: `i${i}` }, i + 1),
    );
    await Promise.all(writes.map((write) => log.commit(write)));
    for (const i of [0, 1, 2]) {
      const scoped = await log.scopedPrefix({ session: `s${i}` }, bounds);
      let digest: string | undefined;
      for (const stored of scoped.events) digest = chainDigest(digest, canonicalJson(stored.event));
      expect(scoped.digest).toBe(digest);
    }
    await log.close();
  });
});
