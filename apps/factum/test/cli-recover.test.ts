import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { factsIn, runCli, temporaryDirectory } from './cli-harness.ts';

describe('factum recover', () => {
  it('lists what a SIGKILLed child left open, show marks it, resume is refused, and --apply closes it with evidence', async () => {
    using dir = temporaryDirectory();
    const session = 'session-crashed';
    // The demo's crash child: a real process killed by SIGKILL between T1 and T2 of write_file.
    mkdirSync(join(dir.dataDir, 'demo', session), { recursive: true });
    const crash = await runCli(['demo', '--crash-child', session, '--dir', dir.dataDir], { cwd: dir.path });
    expect(crash.signal).toBe('SIGKILL');

    // The dead child's lease runs out by the database's clock; until then it is left alone.
    let listed = await runCli(['recover', '--dir', dir.dataDir], { cwd: dir.path });
    for (let tries = 0; !listed.stdout.includes('is gone (lease expired') && tries < 20; tries += 1) {
      expect(listed.stdout).toMatch(/running on host demo-session-crashed .*lease live until/);
      listed = await runCli(['recover', '--dir', dir.dataDir], { cwd: dir.path });
    }
    expect(listed.stdout).toContain('host demo-session-crashed');
    expect(listed.stdout).toContain('recoverable');
    expect(listed.code, 'something is left open').toBe(3);
    expect(listed.stdout).toContain('Unfinished invocations (1)');
    expect(listed.stdout).toMatch(/⚠ write_file plan\.md \(\d+ bytes\) invocation-[0-9a-f]+\/1:call-1/);
    expect(listed.stdout).toContain('--apply compares the file with the content the call intended');
    expect(listed.stdout).toContain('nothing was changed');

    const invocation = /⚠ (invocation-[0-9a-f]+) session/.exec(listed.stdout)![1]!;
    const shown = await runCli(['show', invocation, '--dir', dir.dataDir], { cwd: dir.path });
    expect(shown.stdout).toContain('T1 write_file plan.md');
    expect(shown.stdout).toContain('⚠ UNCERTAIN no T2');

    const runId = /run (run-[0-9a-f]+)/.exec(listed.stdout)![1]!;
    const refused = await runCli(
      ['resume', runId, '--base-url', 'http://127.0.0.1:9/v1', '--model', 'x', '--dir', dir.dataDir],
      {
        cwd: dir.path,
      },
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('error: earlier operations have unknown outcomes');
    expect(refused.stderr).toContain('factum recover');

    const applied = await runCli(['recover', '--apply', '--dir', dir.dataDir], { cwd: dir.path });
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(/✔ write_file invocation-[0-9a-f]+\/1:call-1: succeeded \(reconcile\)/);
    expect(applied.stdout).toContain('nothing is left open');
    const facts = await factsIn(dir.dataDir);
    expect(facts.find(({ fact }) => fact.kind === 'invocation_ended')?.fact).toMatchObject({
      outcome: { kind: 'failed', error: { code: 'interrupted' } },
    });
    expect(facts.at(-1)?.fact).toMatchObject({
      kind: 'tool_reconciled',
      policy: 'reconcile',
      decision: { kind: 'succeeded' },
    });
    expect(readFileSync(join(dir.dataDir, 'demo', session, 'plan.md'), 'utf8')).toContain('# Plan');

    const after = await runCli(['recover', '--dir', dir.dataDir], { cwd: dir.path });
    expect(after.stdout).toContain('nothing is left open');
  }, 60_000);
});
