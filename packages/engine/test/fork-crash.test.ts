import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../src/index.ts';
import { bounds, done, input } from './support/agent-loop.ts';
import { bundleChildren, nodeArgs } from './support/child-node.ts';

const child = fileURLToPath(new URL('./support/fork-child.ts', import.meta.url));
beforeAll(() => bundleChildren(child));

function runChild(target: string, when: string): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const process = spawn('node', nodeArgs(child, [target, when]), {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    process.on('error', reject);
    process.on('close', (_code, signal) => resolve(signal));
  });
}

const noEffect = { names: () => ['echo'], invoke: async (_name: string, value: unknown) => value };

describe.each(testStores())('crash safety of a fork on $name', (stores) => {
  it.each([
    ['before', 'no fork'],
    ['after', 'a whole fork'],
  ] as const)(
    'SIGKILL %s the fork commits leaves %s, and the chain verifies',
    async (when, shows) => {
      await using store = await stores.create();
      const target = store.target;
      await using provider = await startScriptedProvider();
      provider.script(done, done);
      {
        const log = await EventLog.open(target);
        const engine = new Engine({
          log,
          models: new ModelExecutor({ timeoutMs: 5_000 }),
          code: new CodeExecutor(),
        });
        await engine.run(input(provider, 'first', noEffect));
        await engine.close();
        await log.close();
      }
      expect(await runChild(typeof target === 'string' ? target : JSON.stringify(target), when)).toBe(
        'SIGKILL',
      );

      const log = await EventLog.open(target);
      const engine = new Engine({
        log,
        models: new ModelExecutor({ timeoutMs: 5_000 }),
        code: new CodeExecutor(),
      });
      expect(await log.verifyChain()).toMatchObject({ ok: true });
      const source = await log.scopedPrefix({ session: 'session' }, bounds);
      const forked = await log.scopedPrefix({ session: 'forked' }, bounds);
      if (shows === 'no fork') {
        expect(forked.events).toEqual([]);
        expect(forked.highWater).toBe(0);
        // Nothing half-written blocks the same fork again.
        await engine.fork({ session: 'session' }, { newSession: 'forked' });
      } else {
        expect(forked.events.slice(0, -1)).toEqual(source.events);
        expect(forked.events.at(-1)?.event.fact).toMatchObject({
          kind: 'session_forked',
          source: { highWater: source.highWater, digest: source.digest },
        });
      }
      const base = input(provider, 'second', noEffect);
      const outcome = await engine.run({ ...base, invocation: { ...base.invocation, sessionId: 'forked' } });
      expect(outcome.outcome).toEqual({ kind: 'completed' });
      expect(
        (await log.scopedPrefix({ session: 'forked' }, bounds)).events.filter(
          ({ event }) => event.fact.kind === 'session_forked',
        ),
      ).toHaveLength(1);
      expect(await log.verifyChain()).toMatchObject({ ok: true });
      await engine.close();
      await log.close();
    },
    60_000,
  );
});
