import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { eventually, factsIn, runCli, startCli, temporaryDirectory } from './cli-harness.ts';

const NO_PROVIDER = { FACTUM_BASE_URL: '', FACTUM_MODEL: '', FACTUM_API_KEY: '', OPENAI_API_KEY: '' };

describe('no surprises: flags are checked, resume refuses what it cannot do', () => {
  it('resume refuses a completed run without calling the model, and names an unknown run before any settings', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    provider.script({ text: 'Done.' });
    const args = ['--base-url', provider.baseUrl, '--model', 'test', '--dir', dir.dataDir];
    const run = await runCli(['run', 'hello', ...args], { cwd: dir.workspace });
    expect(run.code).toBe(0);
    const runId = /· run (run-[0-9a-f]+)/.exec(run.stdout)![1]!;

    const resumed = await runCli(['resume', runId, ...args], { cwd: dir.workspace });
    expect(resumed.code).toBe(1);
    expect(resumed.stderr.trim().split('\n')).toHaveLength(1);
    expect(resumed.stderr).toContain(`run ${runId} completed: there is nothing to resume`);
    expect(provider.requests, 'the model was not asked again').toHaveLength(1);

    const unknown = await runCli(['resume', 'run-nope', '--dir', dir.dataDir], {
      cwd: dir.workspace,
      env: NO_PROVIDER,
    });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no run run-nope in the log');
    expect(unknown.stderr).not.toContain('base URL');
  }, 60_000);

  it('refuses --base-url that is not a URL and an empty --session with one line naming the flag, writing nothing', async () => {
    using dir = temporaryDirectory();
    const bad = await runCli(
      ['run', 'hello', '--base-url', 'notaurl', '--model', 'm', '--dir', dir.dataDir],
      {
        cwd: dir.workspace,
      },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toContain('--base-url must be an http:// or https:// URL');
    const empty = await runCli(
      [
        'run',
        'hello',
        '--session',
        '',
        '--base-url',
        'http://127.0.0.1:9/v1',
        '--model',
        'm',
        '--dir',
        dir.dataDir,
      ],
      { cwd: dir.workspace },
    );
    expect(empty.code).toBe(2);
    expect(empty.stderr.trim()).toBe('error: --session needs a value (got "") (see `factum --help`)');
    expect(existsSync(join(dir.dataDir, 'events.sqlite')), 'nothing was recorded').toBe(false);
  }, 30_000);

  it('refuses a FACTUM_LEASE_TTL_MS that is not a whole number of at least a second, opening nothing', async () => {
    using dir = temporaryDirectory();
    for (const value of ['soon', '250', '1e9.5']) {
      const bad = await runCli(
        ['run', 'hello', '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm', '--dir', dir.dataDir],
        {
          cwd: dir.workspace,
          env: { FACTUM_LEASE_TTL_MS: value },
        },
      );
      expect(bad.code, value).toBe(1);
      expect(bad.stderr.trim()).toBe(
        'error: FACTUM_LEASE_TTL_MS must be a whole number of milliseconds, at least 1000',
      );
    }
    expect(existsSync(join(dir.dataDir, 'events.sqlite')), 'nothing was opened').toBe(false);
    // Three CLI starts: on a loaded 2-core machine each can take 10 s.
  }, 60_000);

  it('keeps a numeric-looking --session as typed, and -C runs in another directory', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    provider.script(
      {
        toolCalls: [{ id: 'c1', name: 'write_file', arguments: { path: 'out.txt', content: 'here' } }],
      },
      { text: 'Written.' },
    );
    const elsewhere = join(dir.path, 'elsewhere');
    mkdirSync(elsewhere);
    const result = await runCli(
      [
        '-C',
        dir.workspace,
        'run',
        'write out.txt',
        '--session',
        '007',
        '--base-url',
        provider.baseUrl,
        '--model',
        'm',
      ],
      { cwd: elsewhere },
    );
    expect(result.code).toBe(0);
    expect(readFileSync(join(dir.workspace, 'out.txt'), 'utf8')).toBe('here');
    const facts = await factsIn(join(dir.workspace, '.factum'));
    expect(facts.length).toBeGreaterThan(0);
    const log = await runCli(['log', '--json', '--workspace', dir.workspace], { cwd: elsewhere });
    const listed = JSON.parse(log.stdout) as { invocations: { invocation: { sessionId: string } }[] };
    expect(listed.invocations[0]?.invocation.sessionId).toBe('007');
    const missing = await runCli(['-C', join(dir.path, 'nope'), 'log'], { cwd: elsewhere });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--workspace');
  }, 60_000);

  it('a second Ctrl-C prints its message on a line of its own and exits at once', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    provider.script({
      toolCalls: [
        {
          id: 'c1',
          name: 'shell',
          arguments: { command: "echo started > started.txt; trap '' TERM; sleep 5" },
        },
      ],
    });
    const cli = startCli(
      [
        'run',
        'run it',
        // Every machine can run it unsandboxed; each sandbox's second Ctrl-C is in adversarial-shell.
        '--unsandboxed-shell',
        '--no-shell-approval',
        '--base-url',
        provider.baseUrl,
        '--model',
        'm',
        '--dir',
        dir.dataDir,
      ],
      { cwd: dir.workspace },
    );
    await eventually(() => existsSync(join(dir.workspace, 'started.txt')), 45_000);
    cli.child.kill('SIGINT');
    // Soon after, not after the first message: the shell is killed 2 s after its SIGTERM,
    // which would end the run before a slow machine printed it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    cli.child.kill('SIGINT');
    const result = await cli.exited;
    expect(result.code).toBe(130);
    expect(result.stdout).toMatch(/(^|\n)second interrupt: (commands killed; )?exiting now/);
    // The second press kills the command and lets the log record that: the run may then end
    // cancelled, but only after the second press, never on its own first.
    const ended = result.stdout.indexOf('cancelled {');
    const second = result.stdout.indexOf('second interrupt:');
    expect(ended === -1 || ended > second, 'the run did not end on its own first').toBe(true);
  }, 60_000);
});
