import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EventLog } from '@factum/event-log';
import { startScriptedProvider } from '@factum/model/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { restartedCrashHost, turnAfterCrash } from './support/after-crash.ts';
import { bounds, done, temporaryDirectory } from './support/agent-loop.ts';
import { bundleChildren, crashChild, runCrashChild } from './support/child-node.ts';

const crashed = {
  sessionId: 'session',
  turnId: 'turn-crash',
  runId: 'run-crash',
  invocationId: 'invocation-crash',
};

describe('a model step rides along with its first T1', () => {
  beforeAll(() => bundleChildren(crashChild));

  it.each([
    ['ride-before', 'inside the transaction that carries the step and its T1', 'nothing of the step'],
    ['ride-after', 'after that transaction is durable, before anyone is told', 'all of it with its T1'],
  ])(
    'SIGKILL %s (%s): the reopened log shows %s, and recovery works',
    async (scenario) => {
      using dir = temporaryDirectory();
      const ledger = join(dir.path, 'ledger');
      expect(await runCrashChild(dir.file, scenario, ledger)).toBe('SIGKILL');
      expect(existsSync(ledger), 'the effect never started').toBe(false);

      const log = await EventLog.open(dir.file);
      expect(await log.verifyChain()).toMatchObject({ ok: true });
      const kinds = (await log.invocationEvents(crashed, bounds)).map(({ event }) => event.fact.kind);
      const observed = kinds.filter((kind) => kind === 'model_observed').length;
      if (scenario === 'ride-before') {
        // The model was asked and answered, but nothing of it was acknowledged: it is
        // absent, with the run's opening that rode in the same transaction.
        expect(kinds).toEqual([]);
        expect(await log.unfinishedInvocations(10)).toEqual([]);
      } else {
        expect(observed).toBeGreaterThan(0);
        expect(kinds).toEqual([
          'invocation_opened',
          'model_requested',
          ...Array.from({ length: observed }, () => 'model_observed'),
          'model_completed',
          'tool_dispatched',
        ]);
      }
      const recovery = await log.invocationRecovery(crashed, bounds);
      expect(recovery.uncertainOperations).toHaveLength(scenario === 'ride-after' ? 1 : 0);

      // A restarted host ends the dead run and carries the session on; nothing runs.
      await using provider = await startScriptedProvider();
      provider.script(done);
      const engine = restartedCrashHost(log);
      const result = await engine.run(turnAfterCrash(provider, true));
      expect(result.outcome).toEqual({ kind: 'completed' });
      expect((await log.prefix(bounds)).projectInvocation('invocation-crash').terminal).toBe(
        scenario === 'ride-after' ? 'failed' : undefined,
      );
      expect(existsSync(ledger)).toBe(false);
      expect(await log.verifyChain()).toMatchObject({ ok: true });
      await engine.drain();
      await log.close();
    },
    30_000,
  );
});
