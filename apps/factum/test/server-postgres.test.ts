import { testStores } from '@factum/event-log/testing';
import { startScriptedProvider } from '@factum/model/testing';
import { ToolCatalog } from '@factum/tools';
import { describe, expect, it } from 'vitest';
import { FactumRuntime } from '../src/factum-runtime.ts';
import { startServer } from '../src/server/start-server.ts';
import { TOKEN } from './server-harness.ts';

const postgres = testStores().find((factory) => factory.name === 'postgres');

describe('factum serve on PostgreSQL', () => {
  it('two servers on two ports share one log: each sees the other’s facts, and admission is shared', async () => {
    await using store = await postgres!.create();
    await using provider = await startScriptedProvider();
    provider.script({ text: 'first answer', hold: true }, { text: 'second answer' });
    const target = store.target as { postgres: string };
    // As `factum serve --postgres` does: a shared log's unfinished runs may be live elsewhere.
    const open = () =>
      FactumRuntime.open({ target, modelTimeoutMs: 10_000, engine: { recoverOnStart: false } });
    const runtimes = [await open(), await open()];
    const servers = await Promise.all(
      runtimes.map((runtime) =>
        startServer({
          runtime,
          token: TOKEN,
          provider: provider.config(),
          tools: new ToolCatalog(),
          cwd: '/',
          pollIntervalMs: 50,
        }),
      ),
    );
    const [a, b] = servers.map(
      (server) => (path: string, json?: unknown) =>
        fetch(`${server.url}${path}`, {
          method: json === undefined ? 'GET' : 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          ...(json === undefined ? {} : { body: JSON.stringify(json) }),
        }),
    ) as [
      (path: string, json?: unknown) => Promise<Response>,
      (path: string, json?: unknown) => Promise<Response>,
    ];
    try {
      expect(servers[0]!.url).not.toBe(servers[1]!.url);
      expect((await a('/api/sessions/shared/turns', { message: 'hello from A' })).status).toBe(202);
      await provider.requestArrived(0);
      // The turn is live on A: B refuses the session, because the log says so.
      const refused = await b('/api/sessions/shared/turns', { message: 'hello from B' });
      expect(refused.status).toBe(409);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('busy');
      provider.release(0);
      let seenByB: { event: { fact: { kind: string } } }[] = [];
      for (let attempt = 0; attempt < 200; attempt += 1) {
        seenByB = ((await (await b('/api/events?session=shared')).json()) as { events: typeof seenByB })
          .events;
        if (seenByB.some((stored) => stored.event.fact.kind === 'invocation_ended')) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(seenByB.map((stored) => stored.event.fact.kind).at(-1)).toBe('invocation_ended');
      const seenByA = ((await (await a('/api/events?session=shared')).json()) as { events: unknown[] })
        .events;
      expect(seenByB).toEqual(seenByA);
      // Now B may take the next turn of the same session.
      expect((await b('/api/sessions/shared/turns', { message: 'hello from B' })).status).toBe(202);
    } finally {
      for (const server of servers) await server.close();
      for (const runtime of runtimes) await runtime.close();
    }
  }, 60_000);
});
