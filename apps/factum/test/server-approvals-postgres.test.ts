import { testStores } from '@factum/event-log/testing';
import { startScriptedProvider } from '@factum/model/testing';
import { ToolCatalog, ToolHandler } from '@factum/tools';
import { describe, expect, it } from 'vitest';
import { FactumRuntime } from '../src/factum-runtime.ts';
import { startServer } from '../src/server/start-server.ts';
import { EchoEffect, TOKEN } from './server-harness.ts';

const postgres = testStores().find((factory) => factory.name === 'postgres');

describe('approvals on PostgreSQL', () => {
  it('a run parked on one server is decided on two at once: exactly one decision wins, the approved input runs once', async () => {
    await using store = await postgres!.create();
    await using provider = await startScriptedProvider();
    provider.script(
      { toolCalls: [{ id: 'call-1', name: 'echo', arguments: { value: 'pg' } }], finishReason: 'tool_calls' },
      { text: 'echoed on postgres', finishReason: 'stop' },
    );
    const target = store.target as { postgres: string };
    const effect = new EchoEffect();
    const tools = () =>
      new ToolCatalog([
        {
          definition: { name: 'echo', description: 'echo', inputSchema: { type: 'object' } },
          handler: ToolHandler.immediate(effect),
          nesting: 'nestable',
          semantics: 'parallel',
        },
      ]);
    const open = () =>
      FactumRuntime.open({ target, modelTimeoutMs: 10_000, engine: { recoverOnStart: false } });
    const runtimes = [await open(), await open()];
    const servers = await Promise.all(
      runtimes.map((runtime) =>
        startServer({
          runtime,
          token: TOKEN,
          provider: provider.config(),
          tools,
          cwd: '/',
          pollIntervalMs: 50,
          requireApproval: ['echo'],
        }),
      ),
    );
    const call = (index: number, path: string, json?: unknown) =>
      fetch(`${servers[index]!.url}${path}`, {
        method: json === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        ...(json === undefined ? {} : { body: JSON.stringify(json) }),
      });
    try {
      expect((await call(0, '/api/sessions/pg-approve/turns', { message: 'echo pg' })).status).toBe(202);
      let approvals: { operationId: string }[] = [];
      for (let attempt = 0; attempt < 400 && approvals.length === 0; attempt += 1) {
        approvals = ((await (await call(1, '/api/approvals')).json()) as { approvals: typeof approvals })
          .approvals;
        if (approvals.length === 0) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(approvals, 'server B lists the call parked on A').toHaveLength(1);
      const path = `/api/operations/${encodeURIComponent(approvals[0]!.operationId)}/decision`;
      const answers = await Promise.all([
        call(0, path, { decision: 'approve' }),
        call(1, path, { decision: 'approve' }),
      ]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
      for (let attempt = 0; attempt < 400 && effect.started.length === 0; attempt += 1)
        await new Promise((resolve) => setTimeout(resolve, 25));
      let ended = false;
      for (let attempt = 0; attempt < 400 && !ended; attempt += 1) {
        const events = (
          (await (await call(0, '/api/events?session=pg-approve')).json()) as {
            events: { event: { fact: { kind: string; outcome?: { kind: string } } } }[];
          }
        ).events;
        ended = events.some(
          (e) => e.event.fact.kind === 'invocation_ended' && e.event.fact.outcome?.kind === 'completed',
        );
        if (!ended) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(ended, 'the continuation completed').toBe(true);
      expect(effect.started).toEqual([JSON.stringify({ value: 'pg' })]);
    } finally {
      for (const server of servers) await server.close();
      for (const server of servers) await server.registry.drained();
      for (const runtime of runtimes) await runtime.close();
    }
  }, 90_000);
});
