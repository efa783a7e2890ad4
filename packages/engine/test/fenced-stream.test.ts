import { CodeExecutor } from '@factum/code-runtime';
import { EventLog, recoverExpired } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { Engine } from '../src/index.ts';
import { input } from './support/agent-loop.ts';

const wide = { maxEvents: 10_000, maxBytes: 16 * 1024 * 1024 };
const sqlite = testStores().find((factory) => factory.name === 'sqlite')!;

describe('a run taken over while its model streams', () => {
  it('stops on the refused writes without an unhandled rejection, and keeps the takeover’s end', async () => {
    await using store = await sqlite.create();
    const log = await EventLog.open(store.target);
    const engine = new Engine({
      log,
      models: new ModelExecutor({ timeoutMs: 10_000 }),
      code: new CodeExecutor(),
      options: { lease: { hostId: 'streaming-host', ttlMs: 60_000, renewEveryMs: 20_000 }, sweepEveryMs: 0 },
    });
    await using provider = await startScriptedProvider();
    provider.script({ text: Array.from({ length: 60 }, (_, n) => `piece ${n} `), chunkDelayMs: 20 });
    const effect = { names: () => ['echo'], invoke: async (_: string, value: unknown) => value };
    const at = input(provider, 'fenced', effect);
    let streaming!: () => void;
    const started = new Promise<void>((resolve) => {
      streaming = resolve;
    });
    // A durable start: a run whose opening still rides along has nothing to take over.
    const running = engine
      .run(at, { durableStart: true, observer: { onObservation: () => streaming() } })
      .then(
        (outcome) => ({ outcome }),
        (error: unknown) => ({ error }),
      );
    // The step's facts ride along with the next durable one: the observer sees it stream.
    await started;

    // The streaming host stalls past its lease by the database's clock; another host takes over.
    await store.raw(`update hosts set expires_at = renewed_at where host_id = 'streaming-host'`);
    const other = await EventLog.open(store.target);
    await other.holdLease({ hostId: 'other-host', ttlMs: 60_000, renewEveryMs: 20_000 });
    expect((await recoverExpired(other)).ended).toEqual([at.invocation]);

    const settled = await running;
    expect('outcome' in settled ? settled.outcome.outcome.kind : 'rejected').not.toBe('completed');
    const facts = (await other.prefix(wide)).events
      .filter(({ event }) => event.invocation.invocationId === at.invocation.invocationId)
      .map(({ event }) => event.fact);
    expect(facts.at(-1)).toMatchObject({
      kind: 'invocation_ended',
      outcome: { error: { code: 'interrupted' } },
    });
    expect(
      facts.map((fact) => fact.kind),
      'nothing of the stale owner after: its step rode with its end and was refused whole',
    ).toEqual(['invocation_opened', 'invocation_ended']);
    await engine.close();
    await log.close();
    await other.close();
  }, 30_000);
});
