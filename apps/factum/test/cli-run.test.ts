import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { factsIn, runCli, temporaryDirectory } from './cli-harness.ts';

const SECRET = 'sk-cli-test-key-never-printed';

function providerArgs(baseUrl: string, dataDir: string): string[] {
  return ['--base-url', baseUrl, '--model', 'test', '--dir', dataDir];
}

describe('factum run', () => {
  it('streams the answer, shows each tool call, records the facts, and --session continues the session', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    provider.script(
      {
        toolCalls: [
          { id: 'call-1', name: 'write_file', arguments: { path: 'hello.txt', content: 'hi there' } },
        ],
      },
      { text: ['Wrote ', 'hello.txt ', 'for you.'], chunkDelayMs: 5 },
      { text: 'Second turn.' },
    );
    const env = { FACTUM_API_KEY: SECRET };
    const first = await runCli(['run', 'write hello.txt', ...providerArgs(provider.baseUrl, dir.dataDir)], {
      cwd: dir.workspace,
      env,
    });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('✔ write_file hello.txt (8 bytes) — wrote 8 bytes');
    expect(first.stdout).toContain('Wrote hello.txt for you.');
    expect(first.stdout.indexOf('✔ write_file')).toBeLessThan(first.stdout.indexOf('Wrote hello.txt'));
    expect(readFileSync(join(dir.workspace, 'hello.txt'), 'utf8')).toBe('hi there');
    const session = /continue: factum run --session (session-[0-9a-f]+)/.exec(first.stdout)?.[1];
    expect(session).toBeDefined();

    const kinds = (await factsIn(dir.dataDir))
      .map(({ fact }) => fact.kind)
      .filter((kind) => kind !== 'model_observed');
    expect(kinds).toEqual([
      'invocation_opened',
      'model_requested',
      'model_completed',
      'tool_dispatched',
      'tool_settled',
      'model_requested',
      'model_completed',
      'invocation_ended',
    ]);

    const second = await runCli(
      ['run', 'and now?', '--session', session!, ...providerArgs(provider.baseUrl, dir.dataDir)],
      { cwd: dir.workspace, env },
    );
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`session ${session}`);
    const messages = provider.requests[2]!.messages as { role: string; content?: unknown }[];
    expect(messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual([
      'write hello.txt',
      'and now?',
    ]);
    expect(provider.recorded[0]!.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(first.stdout + second.stdout).not.toContain(SECRET);
    for (const file of readdirSync(dir.dataDir)) {
      expect(readFileSync(join(dir.dataDir, file)).includes(SECRET), `${file} must not hold the key`).toBe(
        false,
      );
    }

    const invocation = /factum show (invocation-[0-9a-f]+)/.exec(first.stdout)![1]!;
    const shown = await runCli(['show', invocation, '--dir', dir.dataDir], { cwd: dir.workspace });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/T1 write_file hello\.txt \(8 bytes\) → T2 #\d+ succeeded wrote 8 bytes/);
    expect(shown.stdout).toContain('ended    completed');

    const listed = await runCli(['log', '--dir', dir.dataDir], { cwd: dir.workspace });
    expect(listed.stdout).toMatch(
      new RegExp(`${session}\\n.*completed  "write hello\\.txt"[^\\n]*\\n.*completed  "and now\\?"`),
    );
  }, 60_000);

  it('never offers or runs a shell without --allow-shell: the call is rejected with its sentence', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    provider.script(
      { toolCalls: [{ id: 'call-1', name: 'shell', arguments: { command: 'touch pwned' } }] },
      { text: 'ok' },
    );
    const result = await runCli(['run', 'try a shell', ...providerArgs(provider.baseUrl, dir.dataDir)], {
      cwd: dir.workspace,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('⊘ shell $ touch pwned — did not run: no tool of this name is available');
    expect(existsSync(join(dir.workspace, 'pwned'))).toBe(false);
    const offered = (provider.requests[0]!.tools as { function: { name: string } }[]).map(
      (t) => t.function.name,
    );
    expect(offered).not.toContain('shell');
    const rejected = (await factsIn(dir.dataDir)).find(({ fact }) => fact.kind === 'tool_rejected')?.fact;
    expect(rejected).toMatchObject({ kind: 'tool_rejected', name: 'shell', reason: { kind: 'unavailable' } });
    const invocation = /factum show (invocation-[0-9a-f]+)/.exec(result.stdout)![1]!;
    const shown = await runCli(['show', invocation, '--dir', dir.dataDir], { cwd: dir.workspace });
    expect(shown.stdout).toContain('⊘ shell $ touch pwned did not run: no tool of this name');
  }, 30_000);

  it('prints one line and exits non-zero on errors, with no stack', async () => {
    using dir = temporaryDirectory();
    const missing = await runCli(['run', 'hello', '--dir', dir.dataDir], {
      cwd: dir.workspace,
      env: { FACTUM_BASE_URL: '', FACTUM_MODEL: '' },
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    expect(missing.stderr).toContain('error: no base URL: pass --base-url');
    const unknown = await runCli(['nope'], { cwd: dir.workspace });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim()).toBe('error: unknown command "nope" (see `factum --help`)');
  }, 30_000);
});
