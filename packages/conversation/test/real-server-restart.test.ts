import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationError, type ConversationEvent, OpenCodeBackend } from '../src/index.js';
import { CuttingProxy } from './support/cutting-proxy.js';
import { RealCase, realTimeouts } from './support/real-case.js';

// Its own real server: the last test kills and restarts it.
let c: RealCase;
beforeAll(async () => {
  c = await RealCase.start();
}, 90_000);
afterAll(async () => {
  await c?.close();
}, 30_000);

describe('against the real OpenCode server, its connections broken', () => {
  it('an observer whose event stream is cut mid-prompt reconnects, catches up, and ends in one success', async () => {
    await using proxy = await CuttingProxy.start(c.server.url);
    const { store } = await c.store();
    await using backend = await OpenCodeBackend.open({ baseUrl: proxy.url, store, timeouts: realTimeouts });
    c.provider.script({ text: ['one ', 'two ', 'three ', 'four'], chunkDelayMs: 300 });
    const stream = backend.prompt({ text: 'count slowly' });
    const iterator = stream[Symbol.asyncIterator]();
    const seen: ConversationEvent[] = [];
    for (;;) {
      const next = await iterator.next();
      if (next.done) throw new Error('the stream ended before a delta');
      seen.push(next.value);
      if (next.value.kind === 'delta') break;
    }
    expect(proxy.cutEventStreams()).toBe(1);
    const cutAt = seen.length;
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      seen.push(next.value);
    }
    expect(proxy.subscriptions).toBeGreaterThanOrEqual(2);
    // The catch-up snapshot of our text part, read from the messages after the cut.
    const caughtUp = seen.slice(cutAt).filter((event) => event.kind === 'part' && event.partType === 'text');
    expect(caughtUp.length).toBeGreaterThanOrEqual(1);
    expect(seen.filter((event) => event.kind === 'terminal')).toEqual([
      {
        kind: 'terminal',
        outcome: expect.objectContaining({ outcome: 'success', text: 'one two three four' }),
      },
    ]);
    expect(seen.at(-1)?.kind).toBe('terminal');
    expect(await RealCase.record(store, backend.id())).toBeUndefined();
  }, 60_000);

  it('a server killed mid-prompt and restarted: the prompt ends in a typed error, the record stays, abort reports it lost', async () => {
    const { store } = await c.store();
    const backend = await c.backend(store);
    const [model] = c.provider.script({ text: 'never', hold: true });
    const stream = backend.prompt({ text: 'the server dies under me' });
    const ended = stream.result().catch((error: unknown) => error);
    await model?.arrived();
    await c.server.kill();
    const error = await ended;
    expect(ConversationError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ kind: 'integration', context: { operation: 'prompt' } });
    const kept = await RealCase.record(store, backend.id());
    expect(kept).toMatchObject({
      message_id: stream.messageId,
      phase: { phase: 'admitted' },
      waiter: 'lost',
    });
    model?.release();
    await c.server.restart();
    // The restarted server is idle and holds no finished answer to our message: lost.
    const result = await backend.abort().catch((caught: unknown) => caught);
    expect(ConversationError.isInstance(result)).toBe(true);
    expect(result).toMatchObject({
      kind: 'invalid_state',
      context: { operation: 'abort', phase: 'cancellation' },
    });
    expect(await RealCase.record(store, backend.id())).toBeUndefined();
    expect(await backend.abort()).toEqual({ kind: 'idle' });
  }, 90_000);
});
