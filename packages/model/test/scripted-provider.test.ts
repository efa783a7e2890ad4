import { describe, expect, it } from 'vitest';
import { ScriptedProviderError, startScriptedProvider } from '../src/testing.js';
import { executor, hello, modelError, within } from './support.js';

const notYet = Symbol('not yet');
/** Whether a promise is still pending after the event loop has had a chance to run. */
async function pending(promise: Promise<unknown>): Promise<boolean> {
  const result = await Promise.race([
    promise.then(
      () => 'settled',
      () => 'settled',
    ),
    new Promise((resolve) => setTimeout(() => resolve(notYet), 30)),
  ]);
  return result === notYet;
}

describe('scripted provider', () => {
  it('tells when request N arrived and holds its reply until released', async () => {
    await using provider = await startScriptedProvider();
    const [first, second] = provider.script({ text: 'one' }, { text: 'two', hold: true });
    const models = executor();
    const a = await models.stream(hello, { provider: provider.config() }).step();
    expect(a.parts).toEqual([{ kind: 'text', text: 'one' }]);
    expect((await first?.arrived())?.index).toBe(0);

    const held = models.stream({ ...hello, maxOutputTokens: 7 }, { provider: provider.config() });
    const body = await provider.requestArrived(1);
    expect(body.max_tokens).toBe(7);
    expect(await pending(held.step())).toBe(true);
    provider.release(1);
    expect((await held.step()).parts).toEqual([{ kind: 'text', text: 'two' }]);
    expect((await second?.arrived())?.body).toBe(body);
  });

  it('a release before the request arrives lets it through unheld, and handles release their own reply', async () => {
    await using provider = await startScriptedProvider();
    const [, byHandle] = provider.script({ text: 'a', hold: true }, { text: 'b', hold: true });
    provider.release(0);
    byHandle?.release();
    const models = executor();
    expect((await models.stream(hello, { provider: provider.config() }).step()).parts).toEqual([
      { kind: 'text', text: 'a' },
    ]);
    expect((await models.stream(hello, { provider: provider.config() }).step()).parts).toEqual([
      { kind: 'text', text: 'b' },
    ]);
  });

  it('records bodies, paths and lower-case headers of every request, in order', async () => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'x' }, { status: 418 }] });
    const models = executor();
    await models.stream(hello, { provider: provider.config({ headers: { 'X-Run': 'r1' } }) }).step();
    await modelError(
      models.stream(hello, { provider: provider.config({ kind: 'openai_responses' }) }).step(),
    );
    expect(provider.requests.map((body) => body.model)).toEqual(['test', 'test']);
    expect(provider.recorded.map((record) => [record.index, record.path])).toEqual([
      [0, '/v1/chat/completions'],
      [1, '/v1/responses'],
    ]);
    expect(provider.recorded[0]?.headers['x-run']).toBe('r1');
    expect(JSON.parse(provider.recorded[0]?.text ?? '')).toEqual(provider.requests[0]);
    expect(provider.pending).toBe(0);
  });

  it('delays a reply by delayMs', async () => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'slow', delayMs: 80 }] });
    const started = performance.now();
    await executor().stream(hello, { provider: provider.config() }).step();
    expect(performance.now() - started).toBeGreaterThanOrEqual(70);
  });

  it('streams chunk by chunk with chunkDelayMs, so observations arrive before the step', async () => {
    await using provider = await startScriptedProvider({
      replies: [{ text: ['a', 'b', 'c'], chunkDelayMs: 40 }],
    });
    const stream = executor().stream(hello, { provider: provider.config() });
    const iterator = stream[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ value: { kind: 'text_delta', text: 'a' }, done: false });
    expect(await pending(stream.step())).toBe(true);
    await stream.step();
  });

  it('close() ends held replies and stalled streams, rejects pending arrival waits, and is idempotent', async () => {
    const provider = await startScriptedProvider({ replies: [{ text: 'x', hold: true }] });
    const stream = executor().stream(hello, { provider: provider.config() });
    await provider.requestArrived(0);
    const never = expect(provider.requestArrived(5)).rejects.toSatisfy(ScriptedProviderError.isInstance);
    await provider.close();
    await provider.close();
    expect((await modelError(stream.step())).code).toBe('network');
    await never;
    await within(provider.socketClosed(0), 1_000, 'the held socket closing');
  });

  it('requestArrived honours an abort signal and rejects negative indexes', async () => {
    await using provider = await startScriptedProvider();
    const controller = new AbortController();
    const waiting = provider.requestArrived(0, { signal: controller.signal });
    controller.abort(new Error('gave up'));
    await expect(waiting).rejects.toThrow('gave up');
    await expect(provider.requestArrived(-1)).rejects.toSatisfy(ScriptedProviderError.isInstance);
  });

  it('keeps connections alive between replies', async () => {
    await using provider = await startScriptedProvider();
    const models = executor();
    for (let i = 0; i < 5; i++) {
      provider.script({ text: `${i}` });
      await models.stream(hello, { provider: provider.config() }).step();
    }
    expect(provider.connectionCount).toBeLessThan(5);
  });
});
