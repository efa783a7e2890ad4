import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { eventually, factsIn, runCli, startCli, temporaryDirectory } from './cli-harness.ts';

describe('factum resolve', () => {
  it('unblocks a session a SIGKILLed run left with an uncertain shell call; the model reads the outcome', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    const session = 's-stuck';
    const args = ['--base-url', provider.baseUrl, '--model', 'test', '--dir', dir.dataDir];
    provider.script({
      toolCalls: [{ id: 'call-sh', name: 'shell', arguments: { command: 'touch started && sleep 30' } }],
    });
    // The shell without a sandbox (present on every machine), its approval lifted on purpose.
    const child = startCli(
      ['run', 'deploy', '--session', session, '--unsandboxed-shell', '--no-shell-approval', ...args],
      { cwd: dir.workspace },
    );
    await eventually(() => existsSync(join(dir.workspace, 'started')), 60_000);
    child.child.kill('SIGKILL');
    expect((await child.exited).signal).toBe('SIGKILL');

    // Once the dead run's lease has run out, recovery ends it and leaves the shell call to a person.
    let applied = await runCli(['recover', '--apply', '--dir', dir.dataDir], { cwd: dir.workspace });
    for (let tries = 0; !applied.stdout.includes('decide by hand') && tries < 60; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      applied = await runCli(['recover', '--apply', '--dir', dir.dataDir], { cwd: dir.workspace });
    }
    expect(applied.code, applied.stdout).toBe(3);
    expect(applied.stdout).toContain('1 operation still uncertain: decide by hand');
    const operation = (await factsIn(dir.dataDir)).flatMap(({ fact }) =>
      fact.kind === 'tool_dispatched' ? [fact.operationId] : [],
    )[0]!;

    const refused = await runCli(['run', 'status?', '--session', session, ...args], { cwd: dir.workspace });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('unknown outcomes');

    const resolved = await runCli(
      ['resolve', operation, '--not-run', '--note', 'the deploy log shows no run', '--dir', dir.dataDir],
      { cwd: dir.workspace },
    );
    expect(resolved.code, resolved.stderr).toBe(0);
    expect(resolved.stdout).toContain('resolved as not run');
    const twice = await runCli(['resolve', operation, '--failed', '--note', 'again', '--dir', dir.dataDir], {
      cwd: dir.workspace,
    });
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('error:');

    const recovered = await runCli(['recover', '--dir', dir.dataDir], { cwd: dir.workspace });
    expect(recovered.code, recovered.stdout).toBe(0);
    const shown = await runCli(
      ['show', (await factsIn(dir.dataDir))[0]!.invocationId, '--dir', dir.dataDir],
      {
        cwd: dir.workspace,
      },
    );
    expect(shown.stdout).toMatch(/resolved by \S+: not run/);

    provider.script({ text: 'The deploy did not run; try again?' });
    const next = await runCli(['run', 'status?', '--session', session, ...args], { cwd: dir.workspace });
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toContain('The deploy did not run');
    const request = JSON.stringify(provider.requests.at(-1));
    expect(request, 'the model reads the operator’s outcome').toContain('did not run');
    expect(request).toContain('the deploy log shows no run');
    const reconciled = (await factsIn(dir.dataDir)).find(({ fact }) => fact.kind === 'tool_reconciled')?.fact;
    expect(reconciled).toMatchObject({
      policy: 'operator',
      decision: { kind: 'not_run' },
      note: 'the deploy log shows no run',
    });
  }, 120_000);
});
