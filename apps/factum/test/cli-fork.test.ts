import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CodeExecutor } from '@factum/code-runtime';
import { Engine } from '@factum/engine';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { openLogOf } from '../src/commands/open-runtime.ts';
import { runCli, temporaryDirectory } from './cli-harness.ts';

const providerArgs = (baseUrl: string, dataDir: string) => [
  '--base-url',
  baseUrl,
  '--model',
  'test',
  '--dir',
  dataDir,
];

describe('factum fork', () => {
  it('forks a session at an invocation and runs the message in the new session; the write of the prefix is never run again', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    provider.script(
      { toolCalls: [{ id: 'call-1', name: 'write_file', arguments: { path: 'a.txt', content: 'one' } }] },
      { text: 'Wrote a.txt.' },
      { text: 'Forked answer.' },
    );
    const env = { FACTUM_API_KEY: 'sk-fork-test' };
    const first = await runCli(['run', 'write a.txt', ...providerArgs(provider.baseUrl, dir.dataDir)], {
      cwd: dir.workspace,
      env,
    });
    expect(first.code).toBe(0);
    const session = /continue: factum run --session (session-[0-9a-f]+)/.exec(first.stdout)![1]!;
    const invocation = /factum show (invocation-[0-9a-f]+)/.exec(first.stdout)![1]!;
    // The file changes after the source's turn: a re-run of its write would put "one" back.
    const file = join(dir.workspace, 'a.txt');
    await import('node:fs/promises').then((fs) => fs.writeFile(file, 'changed'));

    const forked = await runCli(
      [
        'fork',
        session,
        '--at',
        invocation,
        'say it differently',
        '--json',
        ...providerArgs(provider.baseUrl, dir.dataDir),
      ],
      { cwd: dir.workspace, env },
    );
    expect(forked.stderr).toBe('');
    expect(forked.code).toBe(0);
    const printed = JSON.parse(forked.stdout.split('\n')[0]!) as {
      session: string;
      source: { invocation: { sessionId: string; invocationId: string } };
    };
    expect(printed.source.invocation).toMatchObject({ sessionId: session, invocationId: invocation });
    expect(printed.session).not.toBe(session);
    expect(forked.stdout).toContain('Forked answer.');
    expect(readFileSync(file, 'utf8'), 'the prefix’s effect never ran again').toBe('changed');
    const users = (provider.requests[2]!.messages as { role: string; content?: unknown }[])
      .filter((message) => message.role === 'user')
      .map((message) => message.content);
    expect(users).toEqual(['write a.txt', 'say it differently']);

    const listed = await runCli(['log', '--session', printed.session, '--dir', dir.dataDir], {
      cwd: dir.workspace,
    });
    expect(listed.stdout).toContain(`forked from session ${session} at the end of ${invocation}`);
    const json = JSON.parse(
      (await runCli(['log', '--json', '--dir', dir.dataDir], { cwd: dir.workspace })).stdout,
    ) as {
      forks: { session: string }[];
    };
    expect(json.forks.map((fork) => fork.session)).toEqual([printed.session]);
    const forkInvocation = /factum show (invocation-[0-9a-f]+)/.exec(forked.stdout)![1]!;
    const shown = await runCli(['show', forkInvocation, '--dir', dir.dataDir], { cwd: dir.workspace });
    expect(shown.stdout).toContain(`forked from session ${session} at the end of ${invocation}`);
  }, 60_000);

  it('lists a fork whose first turn has not run yet (as the web makes one), in text and JSON', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    provider.script({ text: 'Hello.' });
    const first = await runCli(['run', 'hello', ...providerArgs(provider.baseUrl, dir.dataDir)], {
      cwd: dir.workspace,
      env: { FACTUM_API_KEY: 'sk-fork-test' },
    });
    const session = /continue: factum run --session (session-[0-9a-f]+)/.exec(first.stdout)![1]!;
    // The HTTP route's fork without a message: the session holds its `session_forked` alone.
    const log = await openLogOf(dir.dataDir);
    const engine = new Engine({
      log,
      models: new ModelExecutor({ timeoutMs: 10_000 }),
      code: new CodeExecutor(),
      options: { lease: false, recoverOnStart: false },
    });
    const fork = await engine.fork({ session });
    await engine.close();
    await log.close();

    const text = await runCli(['log', '--dir', dir.dataDir], { cwd: dir.workspace });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(fork.sessionId);
    expect(text.stdout).toContain(`forked from session ${session} at the end of`);
    expect(text.stdout).toContain(`no turn yet: factum run --session ${fork.sessionId}`);
    const only = await runCli(['log', '--session', fork.sessionId, '--dir', dir.dataDir], {
      cwd: dir.workspace,
    });
    expect(only.stdout).toContain(`no turn yet: factum run --session ${fork.sessionId}`);
    expect(only.stdout).not.toContain('no invocations in session');
    const json = JSON.parse(
      (await runCli(['log', '--json', '--dir', dir.dataDir], { cwd: dir.workspace })).stdout,
    ) as {
      total: number;
      forks: { session: string }[];
    };
    expect(json.total).toBe(1);
    expect(json.forks.map((listed) => listed.session)).toEqual([fork.sessionId]);
  }, 60_000);

  it('refuses a fork of an unknown session or boundary with a clear error and writes nothing', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    provider.script({ text: 'Hello.' });
    const env = { FACTUM_API_KEY: 'sk-fork-test' };
    const first = await runCli(['run', 'hello', ...providerArgs(provider.baseUrl, dir.dataDir)], {
      cwd: dir.workspace,
      env,
    });
    const session = /continue: factum run --session (session-[0-9a-f]+)/.exec(first.stdout)![1]!;
    const unknown = await runCli(
      ['fork', 'session-none', 'x', ...providerArgs(provider.baseUrl, dir.dataDir)],
      {
        cwd: dir.workspace,
        env,
      },
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('session session-none has no facts');
    const step = await runCli(
      ['fork', session, '--at', 'invocation-none/3', 'x', ...providerArgs(provider.baseUrl, dir.dataDir)],
      {
        cwd: dir.workspace,
        env,
      },
    );
    expect(step.code).toBe(1);
    expect(step.stderr).toContain('has no invocation or step invocation-none/3');
    const log = JSON.parse(
      (await runCli(['log', '--json', '--dir', dir.dataDir], { cwd: dir.workspace })).stdout,
    ) as {
      total: number;
      forks: unknown[];
    };
    expect(log).toMatchObject({ total: 1, forks: [] });
    expect(provider.requests).toHaveLength(1);
  }, 60_000);
});
