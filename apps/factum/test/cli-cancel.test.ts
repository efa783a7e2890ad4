import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { eventually, factsIn, scriptedFlags, startCli, temporaryDirectory } from './cli-harness.ts';

// The effect announces that it runs, then waits; on SIGTERM (the run's abort) it finishes cleanly.
const HELD_COMMAND =
  "echo started > started.txt; trap 'echo finished > finished.txt; exit 0' TERM; sleep 20 & wait";

describe('Ctrl-C during factum run', () => {
  it('the first SIGINT lets the in-flight effect finish and be recorded, ends the invocation cancelled, and exits 130', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    provider.script(
      { toolCalls: [{ id: 'call-1', name: 'shell', arguments: { command: HELD_COMMAND } }] },
      { text: 'never asked for' },
    );
    const cli = startCli(
      // Unsandboxed: the cancel is the subject here, and every machine can run it (each
      // sandbox's own cancel is tested in builtin-tools and adversarial-shell).
      [
        'run',
        'run the command',
        '--unsandboxed-shell',
        '--no-shell-approval',
        ...scriptedFlags(provider, dir.dataDir),
      ],
      { cwd: dir.workspace },
    );
    await eventually(() => existsSync(join(dir.workspace, 'started.txt')));
    expect(existsSync(join(dir.workspace, 'finished.txt'))).toBe(false);
    cli.child.kill('SIGINT');
    const result = await cli.exited;
    expect(result.stderr).toBe('');
    expect(result.code).toBe(130);
    expect(result.stdout).toContain('cancelling: asking the call in flight to stop (shell $');
    expect(result.stdout, 'a call stopped by the cancel is not shown as a success').toMatch(/■ shell \$/);
    expect(result.stdout).toContain('cancelled {runtime_cancellation}');
    expect(readFileSync(join(dir.workspace, 'finished.txt'), 'utf8')).toBe('finished\n');

    const facts = (await factsIn(dir.dataDir)).map(({ fact }) => fact);
    expect(facts.find((fact) => fact.kind === 'tool_settled')).toMatchObject({
      outcome: { kind: 'succeeded' },
    });
    expect(facts.at(-1)).toEqual({
      kind: 'invocation_ended',
      outcome: { kind: 'cancelled', source: 'runtime_cancellation' },
    });
    expect(provider.requests, 'no model step after the cancel').toHaveLength(1);
  }, 30_000);
});
