import { describe, expect, it } from 'vitest';
import { type BatchInfo, EventLog } from '../src/index.ts';
import { bounds, facts, invocation, temporaryDirectory, write } from './support/facts.ts';

type Seen = { readonly started: BatchInfo[]; readonly order: string[] };

async function openWatched(file: string): Promise<{ log: EventLog; seen: Seen }> {
  const seen: Seen = { started: [], order: [] };
  const log = await EventLog.open(file, {
    // Lone writes stay on the loop however slow the disk is today.
    loneCommitBudgetMs: Number.POSITIVE_INFINITY,
    hooks: {
      batchStarted: (batch) => {
        seen.started.push(batch);
        seen.order.push(`start ${seen.started.length}`);
      },
      afterCommit: () => seen.order.push('commit'),
    },
  });
  await log.startWriterThread();
  return { log, seen };
}

const sessions = (count: number) =>
  Array.from({ length: count }, (_, index) => invocation(`-${index}`, `s-${index}`));

// The writer thread commits batches in the order sent, so the next batch can go while
// one commits: the writers one batch resolves make their next writes meanwhile.
describe('group commit through the writer thread', () => {
  it('a burst of writes goes in parts of maxBatch / 8 while the first commits, each part whole and in order', async () => {
    using dir = temporaryDirectory();
    const { log, seen } = await openWatched(dir.file);
    const all = sessions(64);
    await Promise.all(all.map((at) => log.append(write(at, facts.opened()))));
    expect(seen.started.map((batch) => [batch.size, batch.committer])).toEqual([
      [32, 'writer_thread'],
      [32, 'writer_thread'],
    ]);
    // The second was sent before the first committed.
    expect(seen.order).toEqual(['start 1', 'start 2', 'commit', 'commit']);
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 64 });
    const first = await log.read({ limit: 32 });
    expect(first.map((stored) => stored.event.invocation.sessionId)).toEqual(
      all.slice(0, 32).map((at) => at.sessionId),
    );
    await log.close();
  });

  it('a lone write that follows a batch still in the thread commits there, after it', async () => {
    using dir = temporaryDirectory();
    const { log, seen } = await openWatched(dir.file);
    const all = sessions(20);
    await Promise.all(all.map((at) => log.append(write(at, facts.opened()))));
    seen.started.length = 0;
    const batch = all.map((at) => log.append(write(at, facts.completed('s1', []))));
    // The batch goes to the thread in a microtask; its answer comes in a later task.
    await Promise.resolve();
    await Promise.resolve();
    expect(seen.started).toHaveLength(1);
    const lone = log.append(write(all[0]!, facts.completed('s2', [])));
    const sequences = (await Promise.all(batch)).map((stored) => stored.sequence);
    const after = (await lone).sequence;
    expect(seen.started.map((info) => [info.size, info.committer])).toEqual([
      [20, 'writer_thread'],
      [1, 'writer_thread'],
    ]);
    expect(after).toBe(Math.max(...sequences) + 1);
    // With nothing in the thread, a lone write commits on the loop again.
    await log.append(write(all[1]!, facts.completed('s2', [])));
    expect(seen.started.at(-1)?.committer).toBe('event_loop');
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 42 });
    await log.close();
  });

  it('64 writers appending one fact after another keep the thread busy with two batches, and lose nothing', async () => {
    using dir = temporaryDirectory();
    const { log, seen } = await openWatched(dir.file);
    const all = sessions(64);
    await Promise.all(all.map((at) => log.append(write(at, facts.opened()))));
    const perWriter = 10;
    const stored = await Promise.all(
      all.map(async (at) => {
        const sequences: number[] = [];
        for (let step = 0; step < perWriter; step += 1) {
          sequences.push((await log.append(write(at, facts.completed(`s${step}`, [])))).sequence);
        }
        return sequences;
      }),
    );
    // Each writer's facts in its order; every fact once.
    for (const sequences of stored) expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(stored.flat()).size).toBe(64 * perWriter);
    // Somewhere a batch was sent while another was committing.
    let open = 0;
    let overlapped = false;
    for (const step of seen.order) {
      open += step === 'commit' ? -1 : 1;
      if (open > 1) overlapped = true;
    }
    expect(overlapped).toBe(true);
    await log.close();
    await using reopened = await EventLog.open(dir.file);
    expect(await reopened.verifyChain()).toMatchObject({ ok: true, events: 64 + 64 * perWriter });
    for (const at of all.slice(0, 4)) {
      const prefix = await reopened.scopedPrefix({ session: at.sessionId }, bounds);
      expect(prefix.events.map((event) => event.event.fact.kind)).toEqual([
        'invocation_opened',
        ...Array(perWriter).fill('model_completed'),
      ]);
    }
  });
});

describe('the event loop while one writer appends fact after fact', () => {
  it('turns between its commits: each batch on the loop lets timers and sockets run before the next', async () => {
    await using log = await EventLog.open(':memory:');
    const at = invocation();
    await log.append(write(at, facts.opened()));
    let turns = 0;
    let counting = true;
    const count = () => {
      turns += 1;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    const before = turns;
    for (let step = 0; step < 20; step += 1) await log.append(write(at, facts.completed(`s${step}`, [])));
    counting = false;
    // One turn before each commit after the first, at least.
    expect(turns - before).toBeGreaterThanOrEqual(19);
  });
});
