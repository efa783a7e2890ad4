import { join } from 'node:path';
import { EventLog } from '@factum/event-log';
import { startScriptedProvider } from '@factum/model/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { ledgerLines, restartedCrashHost, turnAfterCrash } from './support/after-crash.ts';
import { bounds, done, temporaryDirectory } from './support/agent-loop.ts';
import { bundleChildren, crashChild, runCrashChild } from './support/child-node.ts';

describe('crash safety of the engine', () => {
  beforeAll(() => bundleChildren(crashChild));

  // What the reopened log must show of the crashed run: still open (recovery ends it), no
  // trace at all (it died before its first waited-for commit, which its opening rides
  // with: it had no effect), or sealed by its handoff.
  it.each([
    ['effect', 'in the middle of a tool effect', 'unfinished'],
    ['stream', 'in the middle of the first model stream', 'no trace'],
    ['stream-durable', 'in the middle of the first model stream, after a durable start', 'unfinished'],
    ['handoff-before', 'inside the group commit that seals a handoff, its first', 'no trace'],
    ['handoff-before-durable', 'inside the group commit that seals a handoff', 'unfinished'],
    ['handoff-after', 'after a handoff seal is durable, before anyone is told', 'paused'],
  ] as const)(
    'SIGKILL %s (%s): the chain verifies, effects are settled or uncertain, nothing runs twice; the run is %s',
    async (scenario, _where, shows) => {
      using dir = temporaryDirectory();
      const ledger = join(dir.path, 'ledger');
      expect(await runCrashChild(dir.file, scenario, ledger)).toBe('SIGKILL');
      const effectsBefore = ledgerLines(ledger).length;

      const log = await EventLog.open(dir.file);
      expect(await log.verifyChain()).toMatchObject({ ok: true });
      const crashed = {
        sessionId: 'session',
        turnId: 'turn-crash',
        runId: 'run-crash',
        invocationId: 'invocation-crash',
      };
      const recovery = await log.invocationRecovery(crashed, bounds);
      const stored = (await log.prefix(bounds)).events;
      const facts = stored.map((one) => one.event.fact);
      const settled = facts.filter((fact) => fact.kind === 'tool_settled').length;
      // Every effect in the world is either settled in the log or listed as uncertain.
      expect(settled + recovery.uncertainOperations.length).toBe(effectsBefore);
      const unfinished = await log.unfinishedInvocations(10);
      if (shows === 'paused') {
        expect(unfinished).toEqual([]);
        expect((await log.prefix(bounds)).projectInvocation('invocation-crash').terminal).toBe('paused');
      } else if (shows === 'no trace') {
        expect(unfinished).toEqual([]);
        expect(stored.filter((one) => one.event.invocation.invocationId === 'invocation-crash')).toEqual([]);
        expect(effectsBefore).toBe(0);
      } else {
        expect(unfinished).toEqual([crashed]);
      }
      if (scenario === 'effect') expect(recovery.uncertainOperations).toHaveLength(1);
      if (scenario.startsWith('stream'))
        expect(facts.some((fact) => fact.kind === 'model_completed')).toBe(false);

      // A new engine recovers and carries on; nothing already done runs again.
      await using provider = await startScriptedProvider();
      provider.script(done);
      const engine = restartedCrashHost(log);
      if (shows !== 'paused') {
        // A run that left no trace left nothing unknown either: no need to allow it.
        const result = await engine.run(turnAfterCrash(provider, shows === 'unfinished'));
        expect(result.outcome).toEqual({ kind: 'completed' });
        const terminal = (await log.prefix(bounds)).projectInvocation('invocation-crash').terminal;
        expect(terminal).toBe(shows === 'unfinished' ? 'failed' : undefined);
      }
      expect(ledgerLines(ledger)).toHaveLength(effectsBefore);
      expect(await log.verifyChain()).toMatchObject({ ok: true });
      await engine.drain();
      await log.close();
    },
    30_000,
  );
});
