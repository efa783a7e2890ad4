import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { ToolCatalog, ToolError, ToolHandler } from '@factum/tools';
import { describe, expect, it } from 'vitest';
import { Engine, RunError } from '../src/index.ts';
import { bounds, done } from './support/agent-loop.ts';
import { approvalInput, calls, runChild } from './support/approvals.ts';

/** `send` needs a person's approval; `drop` loses its link mid-effect (outcome unknown). */
const catalog = new ToolCatalog([
  {
    definition: { name: 'send', description: 'send', inputSchema: { type: 'object' } },
    handler: ToolHandler.immediate({ names: () => ['send'], invoke: async () => ({ sent: true }) }),
    nesting: 'nestable',
    semantics: 'parallel',
    approval: 'always',
  },
  {
    definition: { name: 'drop', description: 'drop', inputSchema: { type: 'object' } },
    handler: ToolHandler.immediate({
      names: () => ['drop'],
      invoke: async () => {
        throw new ToolError('outcome_unknown', 'the link dropped while the write was in flight');
      },
    }),
    nesting: 'nestable',
    semantics: 'parallel',
  },
]);

describe.each(testStores())('a step that fails after asking for approval, on $name', (stores) => {
  it('rejects the request as cancelled before the end: nothing is left for anyone to decide or expire', async () => {
    await using store = await stores.create();
    await using provider = await startScriptedProvider();
    await using log = await EventLog.open(store.target);
    const engine = new Engine({
      log,
      models: new ModelExecutor({ timeoutMs: 10_000, retry: { maxAttempts: 1 } }),
      code: new CodeExecutor(),
      options: { lease: { hostId: `host-${stores.name}` } },
    });
    const config = provider.config({ model: 'test', auth: { apiKey: 'k' } });
    provider.script(calls(['send', { to: 'ops' }], ['drop', {}]));
    const work = { kind: 'message' as const, message: 'go', tools: catalog, approvalTtlMs: 1 };
    const failed = await engine.run(approvalInput(config, 'first', catalog, work));
    expect(failed.outcome).toMatchObject({ kind: 'failed', error: { code: 'outcome_unknown' } });

    const asked = 'invocation-first/1:call-1';
    const uncertain = 'invocation-first/1:call-2';
    const facts = (await log.prefix(bounds)).events.map(({ event }) => event.fact);
    const tail = facts.slice(facts.findIndex((fact) => fact.kind === 'approval_requested'));
    expect(tail).toMatchObject([
      { kind: 'approval_requested', operationId: asked },
      { kind: 'tool_dispatched', operationId: uncertain },
      { kind: 'tool_rejected', operationId: asked, reason: { kind: 'cancelled' } },
      { kind: 'invocation_ended', outcome: { kind: 'failed' } },
    ]);
    expect(await engine.pendingApprovals()).toEqual([]);
    // Its deadline passes: the sweep has nothing to expire, and a person nothing to decide.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await engine.sweep();
    await expect(engine.decide(asked, { decision: 'approve', by: 'ana' })).rejects.toSatisfy((error) =>
      RunError.isInstance(error),
    );
    // Nor from another live process on the same log.
    const elsewhere = await runChild(store.target, ['decide', asked, 'approve']);
    expect(elsewhere.lines).toHaveLength(1);
    expect(elsewhere.lines[0]).toMatch(/^refused /);
    const after = (await log.prefix(bounds)).events.map(({ event }) => event.fact);
    expect(after.filter((fact) => fact.kind === 'approval_decided')).toEqual([]);

    // Once a person settles the uncertain call, the model reads the request as not run.
    await engine.resolve(uncertain, { outcome: 'not_run', by: 'ana', note: 'nothing was written' });
    provider.script(done);
    const next = await engine.run(approvalInput(config, 'next', catalog));
    expect(next.outcome).toEqual({ kind: 'completed' });
    expect(provider.requests.at(-1)?.messages).toContainEqual({
      role: 'tool',
      tool_call_id: 'call-1',
      content: 'did not run: the run was cancelled before this call started',
    });
    await engine.close();
  }, 60_000);
});
