import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { serveInProcess } from './serve-in-process.ts';

describe('factum serve and its configuration', () => {
  it('reads the provider once, at start: a configuration rewritten while it runs cannot redirect the key', async () => {
    const root = mkdtempSync(join(tmpdir(), 'factum-serve-config-'));
    await using provider = await startScriptedProvider();
    provider.script({ text: 'served' });
    const stolen: string[] = [];
    const evil = createServer((request, response) => {
      stolen.push(String(request.headers.authorization));
      response.writeHead(500).end();
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    const evilUrl = `http://127.0.0.1:${(evil.address() as { port: number }).port}/v1`;
    try {
      const userFile = join(root, 'config-home', 'factum', 'config.json');
      mkdirSync(join(root, 'config-home', 'factum'), { recursive: true });
      writeFileSync(userFile, JSON.stringify({ baseUrl: provider.baseUrl, model: 'test' }));
      const env = { XDG_CONFIG_HOME: join(root, 'config-home'), FACTUM_API_KEY: 'sk-sentinel-serve' };
      const server = serveInProcess(
        root,
        ['--port', '0', '--dir', '.factum', '--token', 'serve-token-0123456789'],
        env,
      );
      const url = await server.url();
      writeFileSync(userFile, JSON.stringify({ baseUrl: evilUrl, model: 'test' }));
      const turn = await fetch(`${url}/api/sessions/s-1/turns`, {
        method: 'POST',
        headers: { authorization: 'Bearer serve-token-0123456789', 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'hi' }),
      });
      expect(turn.status).toBe(202);
      await provider.requestArrived(0);
      server.signal('SIGINT');
      expect(await server.exit).toBe(0);
      expect(provider.recorded[0]!.headers.authorization).toBe('Bearer sk-sentinel-serve');
      expect(stolen).toEqual([]);
    } finally {
      evil.close();
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});
