import { RuntimeEvent } from '@factum/agent-facts';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventLog, EventLogError } from '../src/index.ts';
import { bounds, facts, invocation, settled, temporaryDirectory, write } from './support/facts.ts';

/** What a damaged row may hold instead of its canonical JSON. */
function damage(original: unknown): fc.Arbitrary<string | Buffer | number> {
  const mutatedEvent = fc
    .tuple(
      fc.array(fc.string({ maxLength: 8 }), { minLength: 1, maxLength: 3 }),
      fc.jsonValue({ maxDepth: 2 }),
      fc.boolean(),
    )
    .map(([path, value, remove]) => {
      const copy = structuredClone(original) as Record<string, unknown>;
      let target: Record<string, unknown> = copy;
      for (const key of path.slice(0, -1)) {
        const next = target[key];
        if (typeof next !== 'object' || next === null) break;
        target = next as Record<string, unknown>;
      }
      const last = path.at(-1)!;
      if (remove) delete target[last];
      else target[last] = value;
      return JSON.stringify(copy);
    });
  return fc.oneof(
    fc.uint8Array({ maxLength: 120 }).map((bytes) => Buffer.from(bytes)),
    fc.string({ unit: 'binary', maxLength: 80 }),
    fc.jsonValue().map((value) => JSON.stringify(value)),
    fc.integer(),
    mutatedEvent,
    fc.nat().map((cut) => JSON.stringify(original).slice(0, cut % JSON.stringify(original).length)),
  );
}

const parses = (body: string | Buffer | number) => {
  try {
    RuntimeEvent.parse(JSON.parse(String(body)));
    return true;
  } catch {
    return false;
  }
};

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('fuzzing the decoder of stored rows', () => {
  it('a damaged row fails every read with corrupt_row naming its sequence, and breaks the chain there', async () => {
    using dir = temporaryDirectory();
    const at = invocation();
    const log = await EventLog.open(dir.file);
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.completed('s1', [{ id: 'c1', input: { value: 1 } }])));
    await log.append(write(at, facts.dispatched('s1:c1', { kind: 'provider', stepId: 's1' })));
    await log.append(settled(at, 's1:c1', { value: 42 }));
    await log.append(write(at, facts.ended()));
    const raw = new Database(dir.file);
    const rows = raw.prepare('select sequence, body from events order by sequence').all() as {
      sequence: number;
      body: string;
    }[];
    const update = raw.prepare('update events set body = ? where sequence = ?');

    await fc.assert(
      fc.asyncProperty(
        fc
          .nat({ max: rows.length - 1 })
          .chain((index) => damage(JSON.parse(rows[index]!.body)).map((body) => ({ index, body }))),
        async ({ index, body }) => {
          const { sequence, body: original } = rows[index]!;
          fc.pre(String(body) !== original);
          update.run(body, sequence);
          try {
            const chain = await log.verifyChain();
            expect(chain).toMatchObject({ ok: false, brokenAt: sequence });
            if (parses(body)) return;
            for (const read of [
              log.prefix(bounds),
              log.scopedPrefix({ session: at.sessionId }, bounds),
              log.read({ afterSequence: 0 }),
              log.invocationEvents(at, bounds),
              log.invocationRecovery(at, bounds),
            ]) {
              const error = await failure(read);
              expect(EventLogError.isInstance(error), String(error)).toBe(true);
              expect(error).toMatchObject({ code: 'corrupt_row', sequence });
            }
          } finally {
            update.run(original, sequence);
          }
        },
      ),
      { numRuns: 300 },
    );
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: rows.length });
    raw.close();
    await log.close();
  }, 60_000);

  it('a damaged result fails its read alone and read together, with corrupt_row', async () => {
    using dir = temporaryDirectory();
    const at = invocation();
    const log = await EventLog.open(dir.file);
    await log.append(write(at, facts.opened()));
    await log.append(write(at, facts.dispatched('s1:c1', { kind: 'provider', stepId: 's1' })));
    const { id } = (await log.append(settled(at, 's1:c1', { value: 42 }))).event;
    const raw = new Database(dir.file);
    raw.prepare('update tool_results set body = ? where event_id = ?').run('{"value":43}', id);
    raw.close();
    await expect(log.resolveToolResult(at.sessionId, id)).rejects.toMatchObject({ code: 'corrupt_row' });
    await expect(log.resolveToolResults(at.sessionId, [id])).rejects.toMatchObject({ code: 'corrupt_row' });
    await log.close();
  });
});
