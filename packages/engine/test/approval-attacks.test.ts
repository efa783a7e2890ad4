import { join } from 'node:path';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { Engine } from '../src/index.ts';
import { bounds, configuration, done, temporaryDirectory } from './support/agent-loop.ts';
import { approvalCatalog, approvalInput, calls, effectInto, effects } from './support/approvals.ts';

describe.each(testStores())('approvals a model cannot get around, on $name', (stores) => {
  async function setup() {
    const store = await stores.create();
    const dir = temporaryDirectory();
    const provider = await startScriptedProvider();
    const log = await EventLog.open(store.target);
    const engine = new Engine({
      log,
      models: new ModelExecutor({ timeoutMs: 10_000, retry: { maxAttempts: 1 } }),
      code: new CodeExecutor(),
    });
    const ledger = join(dir.path, 'ledger');
    const config = provider.config({ model: 'test', auth: { apiKey: 'k' } });
    return {
      provider,
      log,
      engine,
      ledger,
      config,
      facts: async () => (await log.prefix(bounds)).events.map(({ event }) => event.fact),
      async [Symbol.asyncDispose]() {
        await engine.close();
        await log.close();
        await provider[Symbol.asyncDispose]();
        dir[Symbol.dispose]();
        await store[Symbol.asyncDispose]();
      },
    };
  }

  it('a cell calling a tool that needs approval is rejected inside the cell; nothing runs', async () => {
    await using s = await setup();
    const tools = approvalCatalog(effectInto(s.ledger));
    const code =
      'let said; try { await tools.send({ to: "all" }); } catch (e) { said = String(e.message); } text(said);';
    s.provider.script(calls(['exec', { code }]), done);
    const run = {
      ...approvalInput(s.config, 'code', tools),
      configuration: configuration('code_mode'),
    };
    const outcome = await s.engine.run(run);
    expect(outcome.outcome).toEqual({ kind: 'completed' });
    expect(effects(s.ledger)).toEqual([]);
    const rejected = (await s.facts()).filter((fact) => fact.kind === 'tool_rejected');
    expect(rejected).toMatchObject([{ name: 'send', reason: { kind: 'approval_required' } }]);
    expect(JSON.stringify(s.provider.requests.at(-1))).toContain('call the tool directly');
  }, 60_000);

  it('repeating the call id, altering the input later, or a run-level rule: never an unapproved effect', async () => {
    await using s = await setup();
    // Only mail to everyone needs approval, and this run also demands it for echo.
    const tools = approvalCatalog(effectInto(s.ledger), (input) =>
      (input as { to?: string }).to === 'all' ? 'mail to everyone' : false,
    );
    const work = { kind: 'message' as const, message: 'q', tools, requireApproval: ['echo'] };
    s.provider.script(
      calls(
        ['send', { to: 'all', body: 'hi' }, 'x'],
        ['send', { to: 'all', body: 'evil' }, 'x'],
        ['send', { to: 'bob' }, 'y'],
      ),
    );
    const first = await s.engine.run(approvalInput(s.config, 'first', tools, work));
    expect(first.outcome).toEqual({ kind: 'approval_pending', operations: ['invocation-first/1:x'] });
    expect(
      effects(s.ledger).map((effect) => effect.input),
      'only the call needing no approval ran',
    ).toEqual([{ to: 'bob' }]);
    const [pending] = await s.engine.pendingApprovals();
    expect(pending?.reason).toBe('mail to everyone');
    await s.engine.decide('invocation-first/1:x', { decision: 'approve', by: 'ana' });

    // The continuation's model tries the same call id with another input, and echo.
    const parked = await s.engine.parkedRun('session');
    s.provider.script(calls(['send', { to: 'all', body: 'evil again' }, 'x'], ['echo', { value: 1 }]));
    const second = await s.engine.run(
      approvalInput(s.config, 'second', tools, {
        kind: 'continuation',
        source: parked!.source,
        tools,
        requireApproval: ['echo'],
      }),
    );
    expect(second.outcome).toEqual({
      kind: 'approval_pending',
      operations: ['invocation-second/1:x', 'invocation-second/1:call-2'],
    });
    expect(effects(s.ledger).map((effect) => effect.input)).toEqual([
      { to: 'bob' },
      { to: 'all', body: 'hi' },
    ]);
    const facts = await s.facts();
    expect(facts.filter((fact) => fact.kind === 'tool_rejected')).toMatchObject([
      { reason: { kind: 'repeated_call_id' } },
    ]);
    // Only the approved input was ever dispatched for a call that needed approval.
    const dispatched = facts.flatMap((fact) => (fact.kind === 'tool_dispatched' ? [fact.call.input] : []));
    expect(dispatched).toEqual([{ to: 'bob' }, { to: 'all', body: 'hi' }]);
  }, 60_000);
});
