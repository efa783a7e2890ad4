import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Fact } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../src/index.ts';
import { restartedCrashHost } from './support/after-crash.ts';
import { bounds, done, input, repeatedCallId, temporaryDirectory } from './support/agent-loop.ts';
import { bundleChildren, crashChild, runCrashChild } from './support/child-node.ts';

const REPEATED_SENTENCE = 'did not run: an earlier call in the same step has the same call id';

const toolFacts = (facts: Fact[]) =>
  facts.filter((fact) => fact.kind === 'tool_dispatched' || fact.kind === 'tool_rejected');

describe('a model step that repeats a call id', () => {
  beforeAll(() => bundleChildren(crashChild));

  it('runs the first call once and records the second as a rejection the model reads in its next request', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    provider.script(repeatedCallId, done);
    const log = await EventLog.open(dir.file);
    const engine = new Engine({
      log,
      models: new ModelExecutor({ timeoutMs: 5_000 }),
      code: new CodeExecutor(),
    });
    const ran: unknown[] = [];
    const effect = { names: () => ['echo'], invoke: async (_: string, value: unknown) => ran.push(value) };

    const result = await engine.run(input(provider, 'repeat', effect));

    expect(result.outcome).toEqual({ kind: 'completed' });
    expect(ran).toEqual([{ value: 1 }]);
    const facts = (await log.prefix(bounds)).events.map((stored) => stored.event.fact);
    const calls = toolFacts(facts);
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatchObject({ kind: 'tool_dispatched', call: { id: 'call-1', input: { value: 1 } } });
    expect(calls[1]).toMatchObject({
      kind: 'tool_rejected',
      call: { kind: 'provider', callId: 'call-1' },
      input: { value: 2 },
      reason: { kind: 'repeated_call_id' },
    });
    expect(calls[1]!.operationId).not.toBe(calls[0]!.operationId);
    const messages = provider.requests[1]!.messages as { role: string; content?: string }[];
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
    expect(messages[3]!.content).toContain(REPEATED_SENTENCE);
    expect(messages[2]!.content).not.toContain('did not run');
    await engine.drain();
    await log.close();
  });

  it('killed after model_completed and before the first dispatch: recovery lists each operation once and ends the run', async () => {
    using dir = temporaryDirectory();
    const ledger = join(dir.path, 'ledger');
    expect(await runCrashChild(dir.file, 'repeated-call-id', ledger)).toBe('SIGKILL');
    expect(existsSync(ledger), 'no effect ran').toBe(false);

    const log = await EventLog.open(dir.file);
    const crashed = {
      sessionId: 'session',
      turnId: 'turn-crash',
      runId: 'run-crash',
      invocationId: 'invocation-crash',
    };
    const before = (await log.prefix(bounds)).events.map((stored) => stored.event.fact);
    expect(before.some((fact) => fact.kind === 'model_completed')).toBe(true);
    expect(toolFacts(before)).toEqual([]);
    const recovery = await log.invocationRecovery(crashed, bounds);
    const operations = recovery.undispatchedCalls.map((call) => call.operationId);
    expect(operations).toHaveLength(2);
    expect(new Set(operations).size).toBe(2);
    expect(recovery.undispatchedCalls.map((call) => call.repeated)).toEqual([false, true]);

    // Recovery on start records both calls as rejected and ends the dead run.
    await using provider = await startScriptedProvider();
    provider.script(done);
    const engine = restartedCrashHost(log);
    const effect = { names: () => ['echo'], invoke: async (_: string, value: unknown) => value };
    const result = await engine.run(input(provider, 'after', effect));
    expect(result.outcome).toEqual({ kind: 'completed' });
    const prefix = await log.prefix(bounds);
    expect(prefix.projectInvocation('invocation-crash').terminal).toBe('failed');
    const rejections = toolFacts(prefix.events.map((stored) => stored.event.fact));
    expect(rejections.map((fact) => fact.kind === 'tool_rejected' && fact.reason.kind)).toEqual([
      'interrupted',
      'repeated_call_id',
    ]);
    const messages = provider.requests[0]!.messages as { role: string; content?: string }[];
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'user']);
    expect(messages[3]!.content).toContain(REPEATED_SENTENCE);
    expect(existsSync(ledger) ? readFileSync(ledger, 'utf8') : '').toBe('');
    expect(await log.verifyChain()).toMatchObject({ ok: true });
    await engine.drain();
    await log.close();
  }, 30_000);
});
