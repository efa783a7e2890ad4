import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../src/index.ts';
import { temporaryDirectory } from './support/facts.ts';

const child = fileURLToPath(new URL('./support/crash-child.ts', import.meta.url));

/** Runs the child until it kills itself; returns what it printed. */
function runUntilKilled(
  file: string,
  failpoint: string,
  count: number,
): Promise<{ signal: string | null; lines: string[] }> {
  return new Promise((resolve, reject) => {
    const process = spawn(
      'node',
      ['--conditions=@factum/source', '--import', 'tsx', child, file, failpoint, String(count)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let output = '';
    process.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    process.on('error', reject);
    process.on('close', (_code, signal) => resolve({ signal, lines: output.split('\n').filter(Boolean) }));
  });
}

describe('crash safety', () => {
  it('SIGKILL at every failpoint leaves a log whose chain verifies, with every acknowledged write and no half batch', async () => {
    using dir = temporaryDirectory();
    const acked = new Set<string>();
    const batches: string[][] = [];
    const committers = new Set<string>();
    const plan = [
      ['batchStarted', 3],
      ['beforeCommit', 5],
      ['afterCommit', 4],
      ['beforeCommit', 1],
      ['afterCommit', 9],
      ['between', 2],
      ['batchStarted', 11],
      ['beforeCommit', 7],
    ] as const;
    for (const [failpoint, count] of plan) {
      const { signal, lines } = await runUntilKilled(dir.file, failpoint, count);
      expect(signal).toBe('SIGKILL');
      for (const line of lines) {
        const [tag, rest, ids] = line.split(' ') as [string, string, string];
        if (tag === 'acked') acked.add(rest);
        if (tag === 'batch') {
          committers.add(rest);
          batches.push(ids.split(','));
        }
      }
      const log = await EventLog.open(dir.file);
      const report = await log.verifyChain();
      expect(report.ok).toBe(true);
      const stored = new Set<string>();
      for (let after = 0; ; ) {
        const page = await log.read({ afterSequence: after, limit: 5000 });
        if (page.length === 0) break;
        for (const { event } of page) stored.add(event.id);
        after = page.at(-1)!.sequence;
      }
      for (const id of acked) expect(stored.has(id), `acknowledged write ${id} is durable`).toBe(true);
      for (const batch of batches) {
        const present = batch.filter((id) => stored.has(id)).length;
        expect([0, batch.length], 'a batch is all there or not at all').toContain(present);
      }
      // Crashed invocations stay visible as unfinished; none is lost.
      expect(await log.unfinishedInvocations(10_000)).toBeInstanceOf(Array);
      await log.close();
    }
    expect(acked.size).toBeGreaterThan(0);
    // Kills landed in commits of both kinds: in the writer thread and on the event loop.
    expect(committers).toEqual(new Set(['writer_thread', 'event_loop']));
  }, 180_000);
});
