import { join } from 'node:path';
import { EventLog } from '@factum/event-log';
import { startScriptedProvider } from '@factum/model/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { ledgerLines, restartedCrashHost, turnAfterCrash } from './support/after-crash.ts';
import { bounds, done, temporaryDirectory } from './support/agent-loop.ts';
import { bundleChildren, crashChild, runCrashChild } from './support/child-node.ts';

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
    expect(ledgerLines(ledger)).toHaveLength(1);

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
    const engine = restartedCrashHost(live);
    const result = await engine.run(turnAfterCrash(provider, true));
    expect(result.outcome).toEqual({ kind: 'completed' });
    expect((await live.prefix(bounds)).projectInvocation('invocation-crash').terminal).toBe('failed');
    expect(ledgerLines(ledger)).toHaveLength(1);
    await engine.drain();
    await live.close();
  }, 60_000);

  it('SIGKILL inside the transaction of the cell’s T1: neither dispatch is durable, so the call left no trace', async () => {
    using dir = temporaryDirectory();
    const ledger = join(dir.path, 'ledger');
    const live = await EventLog.open(dir.file);
    expect(await runCrashChild(dir.file, 'cell-pair-before', ledger)).toBe('SIGKILL');
    expect(ledgerLines(ledger)).toEqual([]);
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
