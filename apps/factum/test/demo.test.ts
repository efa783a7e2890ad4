import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { factsIn, runCli, temporaryDirectory } from './cli-harness.ts';

describe('factum demo', () => {
  it('tells the story end to end offline — two turns, a SIGKILL mid-tool, recovery — and runs again on the same log', async () => {
    using dir = temporaryDirectory();
    const first = await runCli(['demo', '--dir', dir.dataDir], { cwd: dir.path });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const story = first.stdout;
    for (const line of [
      'A turn in Direct mode',
      '✔ write_file notes.md',
      'A turn in Code mode',
      '▸ exec (code cell)',
      '✔ search "at most once"',
      'killed by SIGKILL',
      '⚠ unfinished invocation',
      '⚠ uncertain operation write_file plan.md',
      'tool_dispatched (T1) is durable, tool_settled (T2) is missing',
      'failed {interrupted}',
      'reconciled write_file',
      ': succeeded',
      '0 uncertain operations',
      'The session goes on',
      'events check out: every row parses, both chains match',
      'factum verify',
    ]) {
      expect(story, `the demo output should say: ${line}`).toContain(line);
    }
    // The head the demo prints is the one verify prints, and holds as an anchor.
    const head = /head +(\d+:sha256:[0-9a-f]{64})/.exec(story)?.[1];
    expect(head, 'the demo prints the log’s head').toBeDefined();
    const verified = await runCli(['verify', '--anchor', head!, '--dir', dir.dataDir], { cwd: dir.path });
    expect(verified.code).toBe(0);
    expect(verified.stdout).toContain(`head  ${head}`);
    const session = /session {4}(session-[0-9a-f]+)/.exec(story)?.[1];
    expect(session).toBeDefined();

    const facts = await factsIn(dir.dataDir);
    const reconciled = facts.filter(({ fact }) => fact.kind === 'tool_reconciled');
    expect(reconciled.map(({ fact }) => fact.kind === 'tool_reconciled' && fact.decision.kind)).toEqual([
      'succeeded',
    ]);
    const ends = facts.flatMap(({ fact }) => (fact.kind === 'invocation_ended' ? [fact.outcome.kind] : []));
    expect(ends).toEqual(['completed', 'completed', 'failed', 'completed']);

    const second = await runCli(['demo', '--dir', dir.dataDir], { cwd: dir.path });
    expect(second.code).toBe(0);
    const again = /session {4}(session-[0-9a-f]+)/.exec(second.stdout)?.[1];
    expect(again, 'each run of the demo uses a fresh session').not.toBe(session);
    expect(second.stdout).toContain(join('.factum', 'demo', again!));
  }, 60_000);
});
