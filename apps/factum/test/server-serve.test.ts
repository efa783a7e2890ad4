import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { serveInProcess } from './serve-in-process.ts';

describe('factum serve', () => {
  it('prints the URL and, on first start only, the token; serves with it; stops on SIGINT, cancelling live runs and draining them', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'factum-serve-'));
    await using provider = await startScriptedProvider();
    provider.script({ text: 'served', finishReason: 'stop' });
    try {
      const args = ['--port', '0', '--dir', '.factum', '--base-url', provider.baseUrl, '--model', 'test'];
      const first = serveInProcess(cwd, args, { FACTUM_API_KEY: 'sk-secret-key-never-printed' });
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

      const second = serveInProcess(cwd, args);
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
      const server = serveInProcess(cwd, ['--port', '0', '--host', '0.0.0.0', '--dir', '.factum']);
      const url = await server.url();
      expect(server.output()).toMatch(/WARNING: listening on 0\.0\.0\.0, reachable from other machines/);
      // The printed URLs are ones a browser can open, the login one included.
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(server.output()).not.toContain('0.0.0.0:');
      expect(server.output()).toMatch(/login +http:\/\/127\.0\.0\.1:\d+\/#token=/);
      expect((await fetch(`${url}/`)).status).toBe(200);
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
      const first = serveInProcess(cwd, args);
      await first.url();
      first.signal('SIGINT');
      expect(await first.exit).toBe(0);
      await expect(
        serveInProcess(cwd, ['--port', '0', '--dir', dir, '--token', 'other-token-0123456789']).exit,
      ).rejects.toMatchObject({
        code: 'token_mismatch',
      });
      await expect(serveInProcess(cwd, ['--port', '70000', '--dir', dir]).exit).rejects.toMatchObject({
        code: 'usage',
      });
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
