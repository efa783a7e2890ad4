import { join } from 'node:path';
import { EventLog } from '@factum/event-log';
import { startScriptedProvider } from '@factum/model/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { restartedCrashHost, turnAfterCrash } from './support/after-crash.ts';
import { done, echoCatalog, temporaryDirectory } from './support/agent-loop.ts';
import { bundleChildren, crashChild, runCrashChild } from './support/child-node.ts';

const effect = { names: () => ['echo'], invoke: async (_: string, value: unknown) => value };

describe('replay in verify mode over the logs crashes leave', () => {
  beforeAll(() => bundleChildren(crashChild));

  // What the recording shows of the killed run: an effect never settled and the end a
  // recovery wrote; a model step cut mid-stream after a durable opening; a handoff seal.
  it.each([
    ['effect', 'failed'],
    ['stream-durable', 'failed'],
    ['handoff-after', 'paused'],
  ] as const)(
    'SIGKILL at %s, recovery, a next run: every invocation replays as recorded',
    async (scenario, crashed) => {
      using dir = temporaryDirectory();
      expect(await runCrashChild(dir.file, scenario, join(dir.path, 'ledger'))).toBe('SIGKILL');
      await using provider = await startScriptedProvider();
      provider.script(done);
      await using log = await EventLog.open(dir.file);
      const engine = restartedCrashHost(log);
      const after = turnAfterCrash(provider, true);
      const next = after.provider;
      if (crashed !== 'paused') expect((await engine.run(after)).outcome).toEqual({ kind: 'completed' });
      const ends = (await log.prefix({ maxEvents: 1000, maxBytes: 1e7 })).events.flatMap(({ event }) =>
        event.fact.kind === 'invocation_ended'
          ? [[event.invocation.invocationId, event.fact.outcome.kind]]
          : [],
      );
      expect(ends[0]).toEqual(['invocation-crash', crashed === 'paused' ? 'handoff_paused' : 'failed']);

      // Each run replayed with the agent it was given: the crashed one's provider was served
      // on the child's own port (a route is part of a request's fact), the next one's here.
      const requests = (await log.prefix({ maxEvents: 1000, maxBytes: 1e7 })).events.flatMap(({ event }) =>
        event.fact.kind === 'model_requested'
          ? [[event.invocation.invocationId, event.fact.routeIdentity]]
          : [],
      );
      const reports = [];
      for (const [invocationId] of ends) {
        // A run killed mid-stream or sealed before its first step recorded no request.
        const route = requests.find(([id]) => id === invocationId)?.[1];
        const provider = route === undefined ? next : { ...next, baseUrl: route.split(' ')[1]! };
        const target = { kind: 'invocation' as const, sessionId: 'session', invocationId: invocationId! };
        reports.push(
          await engine.replay(log, {
            target,
            mode: 'verify',
            agent: { provider, catalog: echoCatalog(effect) },
          }),
        );
      }
      expect(
        reports.map(({ invocations: [entry] }) => [entry!.invocationId, entry!.status, entry!.divergences]),
      ).toEqual(ends.map(([id]) => [id, 'same', []]));
      expect(reports.every((report) => report.invocations[0]!.compared >= 1)).toBe(true);
      await engine.close();
    },
  );
});
