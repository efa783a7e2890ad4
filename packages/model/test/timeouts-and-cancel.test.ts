import { describe, expect, it } from 'vitest';
import { startScriptedProvider } from '../src/testing.js';
import { executor, hello, modelError, recordingClock, within } from './support.js';

describe('timeouts', () => {
  it('a server that accepts and never answers is a connect timeout, and the connection is closed', async () => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'late', hold: true }] });
    const models = executor({ timeoutMs: 5_000, connectTimeoutMs: 100, idleTimeoutMs: 5_000 });
    const error = await modelError(models.stream(hello, { provider: provider.config() }).step());
    expect(error).toMatchObject({ code: 'timeout', phase: 'connect', retryable: true });
    expect(error.message).toContain('connectTimeoutMs');
    await within(provider.socketClosed(0), 2_000, 'the server seeing the socket close');
  });

  it('a server that sends headers and a chunk and then stalls is an idle timeout, told apart from connect', async () => {
    await using provider = await startScriptedProvider({
      replies: [{ text: ['first', 'never'], stallAfterChunks: 1 }],
    });
    const models = executor({ timeoutMs: 5_000, connectTimeoutMs: 5_000, idleTimeoutMs: 150 });
    const stream = models.stream(hello, { provider: provider.config() });
    const error = await modelError(stream.step());
    expect(error).toMatchObject({ code: 'timeout', phase: 'idle' });
    expect(error.message).toContain('idleTimeoutMs');
    expect(stream.observed).toBe(1);
    await within(provider.socketClosed(0), 2_000, 'the server seeing the socket close');
  });

  it('headers followed by silence is an idle timeout too', async () => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'x', stallAfterChunks: 0 }] });
    const error = await modelError(
      executor({ connectTimeoutMs: 5_000, idleTimeoutMs: 100 })
        .stream(hello, { provider: provider.config() })
        .step(),
    );
    expect(error).toMatchObject({ code: 'timeout', phase: 'idle' });
  });

  it('a steady but endless stream hits the total timeout', async () => {
    await using provider = await startScriptedProvider({
      replies: [{ text: Array.from({ length: 100 }, () => 'tick '), chunkDelayMs: 20 }],
    });
    const error = await modelError(
      executor({ timeoutMs: 200, connectTimeoutMs: 5_000, idleTimeoutMs: 5_000 })
        .stream(hello, { provider: provider.config() })
        .step(),
    );
    expect(error).toMatchObject({ code: 'timeout', phase: 'total' });
  });

  it('an idle timeout before any observation is retried', async () => {
    const { clock } = recordingClock();
    await using provider = await startScriptedProvider({
      replies: [{ text: 'x', stallAfterChunks: 0 }, { text: 'ok' }],
    });
    const models = executor({ idleTimeoutMs: 100, clock, retry: { maxAttempts: 2 } });
    const step = await models.stream(hello, { provider: provider.config() }).step();
    expect(step.parts).toEqual([{ kind: 'text', text: 'ok' }]);
  });

  it('a per-provider network setting overrides the executor deadline', async () => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'late', hold: true }] });
    const models = executor({ timeoutMs: 10_000 });
    const error = await modelError(
      models.stream(hello, { provider: provider.config({ network: { connectTimeoutMs: 80 } }) }).step(),
    );
    expect(error).toMatchObject({ code: 'timeout', phase: 'connect' });
    expect(error.message).toContain('80 ms');
  });
});

describe('cancellation', () => {
  it('an aborted signal fails with cancelled before, and nothing is sent', async () => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'never' }, { text: 'second' }] });
    const controller = new AbortController();
    controller.abort(new Error('user pressed stop'));
    const stream = executor().stream(hello, { provider: provider.config(), signal: controller.signal });
    const error = await modelError(stream.step());
    expect(error).toMatchObject({ code: 'cancelled', phase: 'before' });
    await executor().stream(hello, { provider: provider.config() }).step();
    expect(provider.requests).toHaveLength(1);
    expect(provider.pending).toBe(1);
  });

  it('aborting while the server holds the request fails with cancelled during and closes the socket', async () => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'held', hold: true }] });
    const controller = new AbortController();
    const stream = executor().stream(hello, { provider: provider.config(), signal: controller.signal });
    await provider.requestArrived(0);
    controller.abort();
    const error = await modelError(stream.step());
    expect(error).toMatchObject({ code: 'cancelled', phase: 'during' });
    await within(provider.socketClosed(0), 2_000, 'the server seeing the socket close');
  });

  it('aborting mid-stream keeps the observations so far, throws from the iterator, and closes the socket', async () => {
    await using provider = await startScriptedProvider({
      replies: [{ text: ['one', 'two'], stallAfterChunks: 1 }],
    });
    const controller = new AbortController();
    const stream = executor().stream(hello, { provider: provider.config(), signal: controller.signal });
    const seen: unknown[] = [];
    const error = await modelError(
      (async () => {
        for await (const observation of stream) {
          seen.push(observation);
          controller.abort();
        }
      })(),
    );
    expect(seen).toEqual([{ kind: 'text_delta', text: 'one' }]);
    expect(error).toMatchObject({ code: 'cancelled', phase: 'during' });
    await within(provider.socketClosed(0), 2_000, 'the server seeing the socket close');
  });

  it('aborting during a retry pause is cancelled during, with no further request', async () => {
    await using provider = await startScriptedProvider({ replies: [{ status: 503 }, { text: 'never' }] });
    const controller = new AbortController();
    const models = executor({ retry: { maxAttempts: 3, initialDelayMs: 60_000 } });
    const stream = models.stream(hello, { provider: provider.config(), signal: controller.signal });
    await provider.requestArrived(0);
    setTimeout(() => controller.abort(), 20);
    const error = await modelError(stream.step());
    expect(error).toMatchObject({ code: 'cancelled', phase: 'during' });
    expect(provider.requests).toHaveLength(1);
  });
});
