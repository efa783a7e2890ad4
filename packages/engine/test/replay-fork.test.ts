import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { Engine } from '../src/index.ts';
import { done, temporaryDirectory } from './support/agent-loop.ts';
import { approvalInput, calls } from './support/approvals.ts';
import { agentOf, INSTRUCTIONS, Ledger, recordRuns } from './support/replay-log.ts';

describe('replay over a forked session', () => {
  it('replays a fork’s turns on the history it inherits (results read where they were settled), and its source’s invocations only once', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    const ledger = new Ledger();
    const catalog = await recordRuns(dir.file, provider, ledger);
    await using log = await EventLog.open(dir.file);
    const engine = new Engine({
      log,
      models: new ModelExecutor({ timeoutMs: 5_000 }),
      code: new CodeExecutor(),
    });
    await engine.fork({ session: 'session', at: 'invocation-repeated' }, { newSession: 'forked' });
    provider.script(calls(['echo', { value: 7 }]), done);
    const base = approvalInput(provider.config({ model: 'test', auth: { apiKey: 'k' } }), 'in-fork', catalog);
    const outcome = await engine.run({
      ...base,
      instructions: INSTRUCTIONS,
      invocation: { ...base.invocation, sessionId: 'forked' },
    });
    expect(outcome.outcome).toEqual({ kind: 'completed' });
    const ran = ledger.ran.length;

    const all = await engine.replay(log, {
      target: { kind: 'all' },
      mode: 'verify',
      agent: agentOf(provider, catalog),
    });
    expect(all.invocations.map((entry) => [entry.sessionId, entry.invocationId, entry.status])).toEqual([
      ['session', 'invocation-parallel', 'same'],
      ['session', 'invocation-repeated', 'same'],
      ['session', 'invocation-parked', 'same'],
      ['session', 'invocation-continued', 'same'],
      ['cells', 'invocation-code', 'same'],
      ['moving', 'invocation-handoff', 'same'],
      ['forked', 'invocation-in-fork', 'same'],
    ]);
    const fork = await engine.replay(log, {
      target: { kind: 'session', sessionId: 'forked' },
      mode: 'verify',
      agent: agentOf(provider, catalog),
    });
    expect(fork.invocations.map((entry) => [entry.invocationId, entry.status, entry.compared])).toEqual([
      ['invocation-in-fork', 'same', 7],
    ]);
    // Without the inherited history the fork's first request would differ: it is there.
    const planted = await engine.replay(log, {
      target: { kind: 'session', sessionId: 'forked' },
      mode: 'verify',
      agent: agentOf(provider, catalog, 'Another system prompt.'),
    });
    expect(planted.invocations[0]!.divergences[0]).toMatchObject({ kind: 'request', index: 0 });
    expect(ledger.ran).toHaveLength(ran);
    await engine.close();
  });
});
