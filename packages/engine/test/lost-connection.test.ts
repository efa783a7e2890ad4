import { setTimeout as sleep } from 'node:timers/promises';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog, EventLogError } from '@factum/event-log';
import { FaultProxy, testStores } from '@factum/event-log/testing';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { Engine } from '../src/index.ts';
import { done, input, oneCall, temporaryDirectory } from './support/agent-loop.ts';
import { effectInto, effects } from './support/approvals.ts';

const postgres = testStores().find((factory) => factory.name === 'postgres')!;
const wide = { maxEvents: 10_000, maxBytes: 16 * 1024 * 1024 };

describe('an engine whose PostgreSQL connection is lost', () => {
  it('a run whose history read is cut is refused with store_unreachable before any effect; the process lives and the same run succeeds after the heal', async () => {
    await using store = await postgres.create();
    using dir = temporaryDirectory();
    const url = (store.target as { postgres: string }).postgres;
    const address = new URL(url);
    await using proxy = await FaultProxy.start({ host: address.hostname, port: Number(address.port) });
    const log = await EventLog.open({ postgres: proxy.rewrite(url) }, { transactionBoundMs: 500 });
    const unhandled: unknown[] = [];
    const hear = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', hear);
    process.on('uncaughtException', hear);
    try {
      await using engine = new Engine({
        log,
        models: new ModelExecutor({ timeoutMs: 10_000, retry: { maxAttempts: 1 } }),
        code: new CodeExecutor(),
        options: { lease: false },
      });
      await using provider = await startScriptedProvider();
      const ledger = `${dir.path}/ledger`;
      const effect = effectInto(ledger);
      provider.script(oneCall('echo'), done);
      expect((await engine.run(input(provider, 'one', effect))).outcome).toEqual({ kind: 'completed' });
      // A run on a session this engine has not seen reads its history first (a session
      // it wrote last builds on its own copy, checked at the commit): the network cuts
      // under that read.
      const elsewhere = (suffix: string) => {
        const base = input(provider, suffix, effect);
        return { ...base, invocation: { ...base.invocation, sessionId: 'elsewhere' } };
      };
      proxy.stall();
      const refused = engine.run(elsewhere('two')).then(
        () => 'completed',
        (error: unknown) => error,
      );
      while (proxy.held.up === 0) await sleep(5);
      proxy.cut();
      const error = await refused;
      expect(EventLogError.isInstance(error)).toBe(true);
      expect((error as EventLogError).code).toBe('store_unreachable');
      expect(effects(ledger)).toHaveLength(1);
      proxy.heal();
      provider.script(oneCall('echo'), done);
      expect((await engine.run(elsewhere('two'))).outcome).toEqual({ kind: 'completed' });
      expect(effects(ledger)).toHaveLength(2);
      const ended = (await log.prefix(wide)).events
        .filter(({ event }) => event.fact.kind === 'invocation_ended')
        .map(({ event }) => event.invocation.runId);
      expect(ended).toEqual(['run-one', 'run-two']);
      expect((await log.verifyChain()).ok).toBe(true);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', hear);
      process.off('uncaughtException', hear);
      await log.close();
    }
  }, 60_000);
});
