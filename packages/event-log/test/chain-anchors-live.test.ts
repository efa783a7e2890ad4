import { beforeAll, describe, expect, it } from 'vitest';
import { type ChainAnchor, EventLog } from '../src/index.ts';
import { bundleChild, startChild } from './support/child-bundle.ts';
import { facts, invocation, temporaryDirectory, write } from './support/facts.ts';

let writerChild = '';
beforeAll(async () => {
  writerChild = await bundleChild(new URL('./support/writer-child.ts', import.meta.url), 'writer-child');
}, 60_000);

describe('verifying a log another live process writes', () => {
  // Each check also lets the event loop run (the child's exit is seen only then): a check
  // that held it would spin here until the test's timeout.
  it('every check meanwhile verifies, each head holds as an anchor for the next, and the last counts every commit', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    const at = invocation('-here', 'here');
    await log.append(write(at, facts.opened()));
    const other = startChild(writerChild, [dir.file, 'other', '200']);
    let ended = false;
    const markEnded = () => {
      ended = true;
    };
    other.done.then(markEnded, markEnded);
    await other.ready;
    other.process.stdin.write('go\n');
    // Checks run while the other process commits, with every head seen so far as an
    // anchor: a page read mid-write must neither break the chain nor lose a prefix.
    const anchors: ChainAnchor[] = [];
    let checks = 0;
    // A bound, not a measure: without it a check that holds the event loop would spin
    // here for good, since not even the test's timeout could fire.
    const giveUp = Date.now() + 30_000;
    for (; checks < 3 || !ended; checks += 1) {
      expect(Date.now() < giveUp, 'the other process’s exit was never seen').toBe(true);
      const report = await log.verifyChain({ anchors });
      expect(report, JSON.stringify(report)).toMatchObject({ ok: true });
      anchors.push(report.head!);
    }
    const { code, output } = await other.done;
    expect(code, output).toBe(0);
    expect(output.trim().split('\n').at(-1)).toBe('done 200 committed');
    // The opening here; the other's opening, 200 steps, its opening in `shared` and its end.
    const last = await log.verifyChain({ anchors });
    expect(last).toMatchObject({ ok: true, events: 1 + 203, head: { sequence: 204 } });
  }, 60_000);
});
