import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { startScriptedProvider } from '@factum/model/testing';
import { cac } from 'cac';
import { describe, expect, it } from 'vitest';
import type { CliContext } from '../src/commands/cli-context.ts';
import { registerServe } from '../src/commands/serve.ts';
import { Terminal } from '../src/terminal/terminal.ts';

/** `factum serve …` in this process, with its output captured and its signals in the test's hand. */
function serve(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  let out = '';
  const sink = () =>
    new Writable({
      write(chunk, _encoding, done) {
        out += String(chunk);
        done();
      },
    });
  const signals = new EventEmitter();
  const context: CliContext = {
    cwd,
    env: { NO_COLOR: '1', ...env },
    terminal: new Terminal({ stdout: sink(), stderr: sink(), env: { NO_COLOR: '1' } }),
    self: { execPath: process.execPath, args: [] },
    version: '0.0.0-test',
    signals: signals as unknown as CliContext['signals'],
  };
  const cli = cac('factum');
  cli.option('--dir <path>', 'data directory');
  registerServe(cli, context);
  cli.parse(['node', 'factum', 'serve', ...args], { run: false });
  const exit = Promise.resolve(cli.runMatchedCommand()) as Promise<number>;
  return {
    exit,
    output: () => out,
    signal: (name: 'SIGINT' | 'SIGTERM') => signals.emit(name),
    async url(): Promise<string> {
      for (let attempt = 0; attempt < 200 && !/timeline\s+(\S+)/.test(out); attempt += 1) {
        await Promise.race([exit, new Promise((resolve) => setTimeout(resolve, 25))]);
      }
      const match = /timeline\s+(http:\S+)\//.exec(out);
      if (!match?.[1]) throw new Error(`no URL printed:\n${out}`);
      return match[1];
    },
  };
}

describe('factum serve', () => {
  it('prints the URL and, on first start only, the token; serves with it; stops on SIGINT, cancelling live runs and draining them', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'factum-serve-'));
    await using provider = await startScriptedProvider();
    provider.script({ text: 'served', finishReason: 'stop' });
    try {
      const args = ['--port', '0', '--dir', '.factum', '--base-url', provider.baseUrl, '--model', 'test'];
      const first = serve(cwd, args, { FACTUM_API_KEY: 'sk-secret-key-never-printed' });
      const url = await first.url();
      const token = /token\s+(\S+)/.exec(first.output())?.[1];
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(first.output(), 'a login URL carries the token in its fragment').toContain(
        `login     ${url}/#token=${token}`,
      );
      expect(first.output(), 'no warning on loopback').not.toContain('WARNING');
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const turn = await fetch(`${url}/api/sessions/s-cli/turns`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ message: 'hi' }),
      });
      expect(turn.status).toBe(202);
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      first.signal('SIGINT');
      expect(await first.exit).toBe(0);
      expect(first.output()).toContain('runs drained, log closed');
      expect(first.output()).not.toContain('sk-secret-key-never-printed');

      const second = serve(cwd, args);
      const again = await second.url();
      expect(second.output(), 'the token is shown once').not.toMatch(/token\s+\S{43}/);
      expect(second.output(), 'a restart says where the token lives').toContain(
        `only its SHA-256 is kept, in ${join(cwd, '.factum', 'server-token')}`,
      );
      expect(second.output()).not.toContain(token!);
      const sessions = await fetch(`${again}/api/sessions`, { headers });
      expect(sessions.status, 'the same token works after a restart').toBe(200);
      const listed = (await sessions.json()) as { sessions: { id: string; status: string }[] };
      expect(listed.sessions, 'the turn live at SIGINT was ended, not left open').toEqual([
        expect.objectContaining({ id: 's-cli', status: expect.stringMatching(/^(cancelled|completed)$/) }),
      ]);
      second.signal('SIGTERM');
      expect(await second.exit).toBe(0);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('warns loudly when it listens beyond this machine', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'factum-serve-'));
    try {
      const server = serve(cwd, ['--port', '0', '--host', '0.0.0.0', '--dir', '.factum']);
      await server.url();
      expect(server.output()).toMatch(/WARNING: listening on 0\.0\.0\.0, reachable from other machines/);
      server.signal('SIGTERM');
      expect(await server.exit).toBe(0);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('refuses a token that does not match the stored one, and a bad port, before listening', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'factum-serve-'));
    try {
      const dir = join(cwd, '.factum');
      const args = ['--port', '0', '--dir', dir, '--token', 'first-token-0123456789'];
      const first = serve(cwd, args);
      await first.url();
      first.signal('SIGINT');
      expect(await first.exit).toBe(0);
      await expect(
        serve(cwd, ['--port', '0', '--dir', dir, '--token', 'other-token-0123456789']).exit,
      ).rejects.toMatchObject({
        code: 'token_mismatch',
      });
      await expect(serve(cwd, ['--port', '70000', '--dir', dir]).exit).rejects.toMatchObject({
        code: 'usage',
      });
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
