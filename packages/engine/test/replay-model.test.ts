import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { Engine, type ReplayReport } from '../src/index.ts';
import { temporaryDirectory } from './support/agent-loop.ts';
import { approvalCatalog, approvalInput, calls } from './support/approvals.ts';
import { agentOf, INSTRUCTIONS, Ledger } from './support/replay-log.ts';

describe('replay in model mode', () => {
  it('serves a repeated recorded call its recorded result, does not run a new one, and says so', async () => {
    using dir = temporaryDirectory();
    await using recording = await startScriptedProvider();
    const ledger = new Ledger();
    const catalog = approvalCatalog(ledger);
    recording.script(calls(['echo', { value: 1 }], ['echo', { value: 2 }]), {
      text: 'recorded answer',
      usage: { inputTokens: 10, outputTokens: 5 },
    });
    await using log = await EventLog.open(dir.file);
    const engine = new Engine({
      log,
      models: new ModelExecutor({ timeoutMs: 5_000 }),
      code: new CodeExecutor(),
    });
    const run = approvalInput(recording.config({ model: 'test', auth: { apiKey: 'k' } }), 'one', catalog);
    await engine.run({ ...run, instructions: INSTRUCTIONS });
    expect(ledger.ran).toEqual([{ value: 1 }, { value: 2 }]);
    const head = await log.sessionHead('session');

    await using next = await startScriptedProvider();
    const replayOnce = async (): Promise<ReplayReport> => {
      next.script(calls(['echo', { value: 2 }], ['echo', { value: 3 }]), {
        text: 'new answer',
        usage: { inputTokens: 20, outputTokens: 7 },
      });
      return engine.replay(log, {
        target: { kind: 'invocation', sessionId: 'session', invocationId: 'invocation-one' },
        mode: 'model',
        agent: agentOf(next, catalog),
      });
    };
    const report = await replayOnce();
    expect(ledger.ran, 'no effect ran: the effect ledger is unchanged').toEqual([{ value: 1 }, { value: 2 }]);
    expect(await log.sessionHead('session'), 'nothing was written to the source log').toEqual(head);
    const [replayed] = report.invocations;
    expect(replayed!.status).toBe('diverged');
    const model = replayed!.model!;
    // The recorded operation served (its second call), and the new model's call that did not match.
    expect(model.sameCalls.map((call) => [call.operationId, call.name])).toEqual([
      ['invocation-one/1:call-2', 'echo'],
    ]);
    expect(model.newCalls.map((call) => [call.operationId, call.name])).toEqual([
      ['invocation-one/1:call-2', 'echo'],
    ]);
    expect(model.missingCalls.map((call) => [call.operationId, call.name])).toEqual([
      ['invocation-one/1:call-1', 'echo'],
    ]);
    expect(model.answers).toEqual({
      recorded: { text: 'recorded answer', end: 'completed' },
      replayed: { text: 'new answer', end: 'completed' },
    });
    expect(model.usage.replayed).toEqual({ inputTokens: 20 + 4, outputTokens: 7 + 3, totalTokens: 34 });
    // The new model was told the call is unavailable in replay, and its served call got the recorded result.
    const told = JSON.stringify(next.requests[1]!.messages);
    expect(told).toContain('unavailable in replay');
    expect(told).toContain('{\\"value\\":2}');
    expect(
      replayed!.divergences.map((entry) => [entry.kind, entry.replayed?.kind ?? entry.recorded?.kind]),
    ).toEqual([
      ['call', 'tool_dispatched'],
      ['call', 'tool_dispatched'],
    ]);
    const again = await replayOnce();
    expect(JSON.stringify(again), 'a scripted replay gives the same report byte for byte').toBe(
      JSON.stringify(report),
    );
    await engine.close();
  });

  it('a new model that fails ends its invocation failed in the report, as the engine ends a run, and nothing runs', async () => {
    using dir = temporaryDirectory();
    await using recording = await startScriptedProvider();
    const ledger = new Ledger();
    const catalog = approvalCatalog(ledger);
    recording.script(calls(['echo', { value: 1 }]), { text: 'recorded answer' });
    await using log = await EventLog.open(dir.file);
    const engine = new Engine({
      log,
      models: new ModelExecutor({ timeoutMs: 5_000, retry: { maxAttempts: 1 } }),
      code: new CodeExecutor(),
    });
    await engine.run(
      approvalInput(recording.config({ model: 'test', auth: { apiKey: 'k' } }), 'one', catalog),
    );
    await using next = await startScriptedProvider();
    next.script({ status: 401, body: { error: { message: 'bad key' } } });
    const report = await engine.replay(log, {
      target: { kind: 'session', sessionId: 'session' },
      mode: 'model',
      agent: agentOf(next, catalog),
    });
    const model = report.invocations[0]!.model!;
    expect(model.answers.replayed.end).toBe('failed: model_auth');
    expect(model.missingCalls.map((call) => call.name)).toEqual(['echo']);
    expect(report.invocations[0]!.divergences.map((entry) => entry.kind)).toEqual(['call', 'end']);
    expect(ledger.ran).toEqual([{ value: 1 }]);
    await engine.close();
  });
});
