import { join } from 'node:path';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../src/index.ts';
import { ledgerLines } from './support/after-crash.ts';
import { bounds, done, input, oneCall, temporaryDirectory } from './support/agent-loop.ts';
import { bundleChildren, crashChild, runCrashChild } from './support/child-node.ts';

/**
 * A read-only tool's T1 rides with its T2, so a process killed in the middle of a read
 * leaves no trace of the call, nor of the run whose first waited-for commit that was: no
 * effect needs recovering. Another process on the same log, live all along, sees the
 * session free and runs the next turn in it at once, without allowing a prior unknown.
 */
describe('a crash in the middle of a read-only call', () => {
  beforeAll(() => bundleChildren(crashChild));

  it('SIGKILL inside the read: no trace of the run, nothing uncertain, and a live second process goes on in the session', async () => {
    using dir = temporaryDirectory();
    const ledger = join(dir.path, 'ledger');
    // The second process's log and engine, open before the child starts and after it dies.
    const live = await EventLog.open(dir.file);
    await using provider = await startScriptedProvider();
    provider.script(oneCall('echo'), done, done);
    const engine = new Engine({
      log: live,
      models: new ModelExecutor({ timeoutMs: 5_000 }),
      code: new CodeExecutor(),
      options: { lease: { hostId: 'live-host' } },
    });
    const effect = { names: () => ['echo'], invoke: async (_: string, value: unknown) => value };
    expect((await engine.run(input(provider, 'before', effect))).outcome).toEqual({ kind: 'completed' });
    const head = (await live.prefix(bounds)).highWater;

    expect(await runCrashChild(dir.file, 'read-effect', ledger)).toBe('SIGKILL');
    // The read ran in the world; the log never heard of it.
    expect(ledgerLines(ledger)).toHaveLength(1);
    const stored = (await live.prefix(bounds)).events;
    expect(stored.filter((one) => one.event.invocation.invocationId === 'invocation-crash')).toEqual([]);
    expect((await live.prefix(bounds)).highWater).toBe(head);
    expect(await live.unfinishedInvocations(10)).toEqual([]);
    const crashed = {
      sessionId: 'session',
      turnId: 'turn-crash',
      runId: 'run-crash',
      invocationId: 'invocation-crash',
    };
    const recovery = await live.invocationRecovery(crashed, bounds);
    expect(recovery.uncertainOperations).toEqual([]);

    // The live process admits the next turn in the session at once: nothing is unknown.
    const next = await engine.run(input(provider, 'after', effect));
    expect(next.outcome).toEqual({ kind: 'completed' });
    await engine.drain();
    expect(await live.verifyChain()).toMatchObject({ ok: true });
    await live.close();

    // A reopened log shows the same.
    const reopened = await EventLog.open(dir.file);
    expect(await reopened.verifyChain()).toMatchObject({ ok: true });
    expect(await reopened.unfinishedInvocations(10)).toEqual([]);
    const kinds = (await reopened.prefix(bounds)).events
      .filter((one) => one.event.invocation.invocationId !== 'invocation-before')
      .map((one) => one.event.fact.kind);
    expect(kinds).toEqual([
      'invocation_opened',
      'model_requested',
      'model_observed',
      'model_completed',
      'invocation_ended',
    ]);
    await reopened.close();
  }, 60_000);
});
