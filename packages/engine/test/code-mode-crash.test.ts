import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../src/index.ts';
import { bounds, done, input, temporaryDirectory } from './support/agent-loop.ts';
import { bundleChildren, crashChild, runCrashChild } from './support/child-node.ts';

const effectsIn = (path: string) =>
  existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];

/**
 * An `exec` call's two dispatches commit in one transaction, before the cell runs. A
 * process killed in a cell's child effect leaves both, and the child's, durable and
 * unsettled: all three are uncertain, and recovery runs none of them again. Another
 * process holding the same log open sees exactly that, without reopening it.
 */
describe('a crash in the middle of a Code mode cell', () => {
  beforeAll(() => bundleChildren(crashChild));

  it('SIGKILL in a child effect: the call, its cell and the child are uncertain, for a live second process too', async () => {
    using dir = temporaryDirectory();
    const ledger = join(dir.path, 'ledger');
    const live = await EventLog.open(dir.file);
    expect(await runCrashChild(dir.file, 'cell-effect', ledger)).toBe('SIGKILL');
    expect(effectsIn(ledger)).toHaveLength(1);

    const crashed = {
      sessionId: 'session',
      turnId: 'turn-crash',
      runId: 'run-crash',
      invocationId: 'invocation-crash',
    };
    const parent = 'invocation-crash/1:call-1';
    const uncertain = [parent, `${parent}#cell`, `${parent}#cell/c0`];
    // The live process, open all along, and a reopened log see the same.
    const reopened = await EventLog.open(dir.file);
    for (const log of [live, reopened]) {
      expect(await log.verifyChain()).toMatchObject({ ok: true });
      expect(await log.unfinishedInvocations(10)).toEqual([crashed]);
      expect([...(await log.invocationRecovery(crashed, bounds)).uncertainOperations].sort()).toEqual(
        uncertain,
      );
    }
    await reopened.close();

    // A restarted host ends the crashed run; the next turn runs nothing of it again.
    await using provider = await startScriptedProvider();
    provider.script(done);
    const engine = new Engine({
      log: live,
      models: new ModelExecutor({ timeoutMs: 5_000 }),
      code: new CodeExecutor(),
      options: { lease: { hostId: 'crash-host' } },
    });
    const effect = { names: () => ['echo'], invoke: async (_: string, value: unknown) => value };
    const base = input(provider, 'after', effect);
    const result = await engine.run({
      ...base,
      work: { kind: 'message', message: 'go on', allowPriorUnknown: true, tools: base.work.tools },
    });
    expect(result.outcome).toEqual({ kind: 'completed' });
    expect((await live.prefix(bounds)).projectInvocation('invocation-crash').terminal).toBe('failed');
    expect(effectsIn(ledger)).toHaveLength(1);
    await engine.drain();
    await live.close();
  }, 60_000);

  it('SIGKILL inside the transaction of the cell’s T1: neither dispatch is durable, so the call left no trace', async () => {
    using dir = temporaryDirectory();
    const ledger = join(dir.path, 'ledger');
    const live = await EventLog.open(dir.file);
    expect(await runCrashChild(dir.file, 'cell-pair-before', ledger)).toBe('SIGKILL');
    expect(effectsIn(ledger)).toEqual([]);
    // The pair rode with the run's opening and model step: none of it reached the log,
    // so nothing is unfinished or uncertain, for the live process as for a reopened log.
    const reopened = await EventLog.open(dir.file);
    for (const log of [live, reopened]) {
      expect(await log.verifyChain()).toMatchObject({ ok: true });
      expect(await log.unfinishedInvocations(10)).toEqual([]);
      expect((await log.prefix(bounds)).events).toEqual([]);
    }
    await reopened.close();
    await live.close();
  }, 60_000);
});
