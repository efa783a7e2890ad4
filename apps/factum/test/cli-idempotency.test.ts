import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { factsIn, runCli, scriptedFlags, startCli, temporaryDirectory } from './cli-harness.ts';

const env = { FACTUM_API_KEY: 'sk-cli-idempotency-key' };

async function openings(dataDir: string): Promise<number> {
  return (await factsIn(dataDir)).filter(({ fact }) => fact.kind === 'invocation_opened').length;
}

describe('factum run --idempotency-key', () => {
  it('the same command run again gets the first run’s answer and exit code, and asks no model', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    // The model's answer carries terminal escapes: shown as text, never as control sequences.
    provider.script({ text: 'Invoice sent.\u001b]0;owned\u0007' });
    const args = [
      'run',
      'send the invoice to Bob',
      '--idempotency-key',
      '007',
      ...scriptedFlags(provider, dir.dataDir),
    ];
    const first = await runCli(args, { cwd: dir.workspace, env });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('Invoice sent.');

    const again = await runCli(args, { cwd: dir.workspace, env });
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already started invocation');
    expect(again.stdout).toContain('Invoice sent.');
    expect(again.stdout).not.toContain('\u001b]0;owned');
    const session = /session (session-[0-9a-f]+)/.exec(first.stdout)?.[1];
    expect(session).toBeDefined();
    expect(again.stdout).toContain(`session ${session}`);
    expect(provider.requests).toHaveLength(1);
    expect(await openings(dir.dataDir)).toBe(1);

    // Another message under the same key is refused, with nothing written.
    const other = await runCli(
      [
        'run',
        'send the invoice to Mallory',
        '--idempotency-key',
        '007',
        ...scriptedFlags(provider, dir.dataDir),
      ],
      { cwd: dir.workspace, env },
    );
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain('already started a run with other work');
    expect(await openings(dir.dataDir)).toBe(1);
    const bad = await runCli(
      ['run', 'x', '--idempotency-key', 'a b', ...scriptedFlags(provider, dir.dataDir)],
      {
        cwd: dir.workspace,
        env,
      },
    );
    expect(bad.code).toBe(2);
    expect(provider.requests).toHaveLength(1);
  }, 120_000);

  it('rerun after the first process was killed mid-run: the recovered outcome and its exit code, never a second run', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    const [held] = provider.script({ text: 'never sent', hold: true });
    const args = [
      'run',
      'send the invoice to Bob',
      '--idempotency-key',
      'invoice-1',
      ...scriptedFlags(provider, dir.dataDir),
    ];
    const first = startCli(args, { cwd: dir.workspace, env });
    await held!.arrived();
    first.child.kill('SIGKILL');
    await first.exited;

    const again = await runCli(args, { cwd: dir.workspace, env });
    expect(again.code).toBe(1);
    expect(again.stdout).toContain('already started invocation');
    expect(again.stdout).toContain('failed {interrupted}');
    expect(provider.requests).toHaveLength(1);
    expect(await openings(dir.dataDir)).toBe(1);
  }, 120_000);
});
