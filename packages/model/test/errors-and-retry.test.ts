import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ModelError } from '../src/index.js';
import { startScriptedProvider } from '../src/testing.js';
import { executor, hello, modelError, recordingClock } from './support.js';

describe('errors by status', () => {
  it.each([
    [401, {}, 'auth', 'check the API key (set OPENAI_API_KEY or pass auth.apiKey)'],
    [403, {}, 'auth', 'permissions'],
    [429, {}, 'rate_limited', 'rate limited'],
    [
      400,
      {
        error: {
          code: 'context_length_exceeded',
          message: "This model's maximum context length is 8192 tokens",
        },
      },
      'context_overflow',
      'shorten the conversation',
    ],
    [413, {}, 'context_overflow', 'context window'],
    [400, { error: { message: 'unknown field foo' } }, 'bad_request', 'unknown field foo'],
    [404, {}, 'bad_request', 'check baseUrl'],
    [500, {}, 'server', 'the provider failed'],
    [502, 'Bad Gateway', 'server', 'Bad Gateway'],
    [503, {}, 'server', '503 from'],
  ] as const)('%i %j is %s and says how to fix it', async (status, body, code, advice) => {
    await using provider = await startScriptedProvider({ replies: [{ status, body }] });
    const error = await modelError(executor().stream(hello, { provider: provider.config() }).step());
    expect(error).toBeInstanceOf(ModelError);
    expect(ModelError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code, status, attempts: 1 });
    expect(error.message).toContain(`${status} from ${provider.baseUrl}`);
    expect(error.message).toContain(advice);
  });

  it('a 401 without any key says to pass one', async () => {
    await using provider = await startScriptedProvider({ replies: [{ status: 401 }] });
    const error = await modelError(
      executor()
        .stream(hello, { provider: provider.config({ auth: { none: true } }) })
        .step(),
    );
    expect(error.message).toContain('pass auth: { apiKey }');
  });

  it('a 401 from an Anthropic endpoint names ANTHROPIC_API_KEY', async () => {
    await using provider = await startScriptedProvider({ replies: [{ status: 401 }] });
    const error = await modelError(
      executor()
        .stream(hello, { provider: provider.config({ kind: 'anthropic_messages' }) })
        .step(),
    );
    expect(error.message).toContain('ANTHROPIC_API_KEY');
  });

  it('a refused connection is a network error that names the base URL', async () => {
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}/v1`;
    const error = await modelError(
      executor()
        .stream(hello, {
          provider: { kind: 'openai_chat_completions', model: 'm', baseUrl, auth: { none: true } },
        })
        .step(),
    );
    expect(error).toMatchObject({ code: 'network', retryable: true });
    expect(error.message).toContain(baseUrl);
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('a connection reset mid-stream is a network error', async () => {
    await using provider = await startScriptedProvider({
      replies: [{ text: ['a', 'b'], resetAfterChunks: 1 }],
    });
    const error = await modelError(executor().stream(hello, { provider: provider.config() }).step());
    expect(error.code).toBe('network');
  });

  it('the script running out answers 500 with a body that says so', async () => {
    await using provider = await startScriptedProvider();
    const error = await modelError(executor().stream(hello, { provider: provider.config() }).step());
    expect(error).toMatchObject({ code: 'server', status: 500 });
    expect(error.message).toContain('the script is exhausted');
  });
});

describe('retries', () => {
  it('retries 5xx and network failures with growing, jittered pauses and then succeeds', async () => {
    const { clock, delays } = recordingClock();
    await using provider = await startScriptedProvider({
      replies: [{ status: 503 }, { status: 500 }, { text: 'ok' }],
    });
    const models = executor({ clock, random: () => 0.5, retry: { maxAttempts: 3, initialDelayMs: 100 } });
    const step = await models.stream(hello, { provider: provider.config() }).step();
    expect(step.parts).toEqual([{ kind: 'text', text: 'ok' }]);
    // Equal jitter at random 0.5: three quarters of 100, then of 200.
    expect(delays).toEqual([75, 150]);
    expect(provider.requests).toHaveLength(3);
  });

  it('waits exactly the retry-after a 429 asks for (seconds, and retry-after-ms)', async () => {
    const { clock, delays } = recordingClock();
    await using provider = await startScriptedProvider({
      replies: [
        { status: 429, headers: { 'retry-after': '2' } },
        { status: 429, headers: { 'retry-after-ms': '350' } },
        { text: 'ok' },
      ],
    });
    const models = executor({ clock, retry: { maxAttempts: 3 } });
    await models.stream(hello, { provider: provider.config() }).step();
    expect(delays).toEqual([2000, 350]);
  });

  it('a retry-after beyond maxRetryAfterMs is final and carries retryAfterMs', async () => {
    const { clock, delays } = recordingClock();
    await using provider = await startScriptedProvider({
      replies: [{ status: 429, headers: { 'retry-after': '120' } }],
    });
    const models = executor({ clock, retry: { maxAttempts: 3, maxRetryAfterMs: 60_000 } });
    const error = await modelError(models.stream(hello, { provider: provider.config() }).step());
    expect(error).toMatchObject({ code: 'rate_limited', retryAfterMs: 120_000, attempts: 1 });
    expect(delays).toEqual([]);
  });

  it('gives up after maxAttempts and says how many were made', async () => {
    const { clock } = recordingClock();
    await using provider = await startScriptedProvider({
      replies: [{ status: 500 }, { status: 500 }, { status: 500 }],
    });
    const error = await modelError(
      executor({ clock, retry: { maxAttempts: 3 } })
        .stream(hello, { provider: provider.config() })
        .step(),
    );
    expect(error).toMatchObject({ code: 'server', attempts: 3 });
    expect(error.message).toContain('gave up after 3 attempts');
    expect(provider.requests).toHaveLength(3);
  });

  it('never retries after the first observation', async () => {
    const { clock, delays } = recordingClock();
    await using provider = await startScriptedProvider({
      replies: [{ text: ['partial', ' rest'], resetAfterChunks: 1 }, { text: 'second answer' }],
    });
    const stream = executor({ clock, retry: { maxAttempts: 3 } }).stream(hello, {
      provider: provider.config(),
    });
    const error = await modelError(stream.step());
    expect(error).toMatchObject({ code: 'network', attempts: 1 });
    expect(stream.observed).toBe(1);
    expect(delays).toEqual([]);
    expect(provider.requests).toHaveLength(1);
  });

  it('retries a failure that came before any observation even after headers arrived', async () => {
    const { clock } = recordingClock();
    await using provider = await startScriptedProvider({
      replies: [
        { raw: `data: ${JSON.stringify({ error: { type: 'server_error', message: 'busy' } })}\n\n` },
        { text: 'ok' },
      ],
    });
    const step = await executor({ clock, retry: { maxAttempts: 2 } })
      .stream(hello, { provider: provider.config() })
      .step();
    expect(step.parts).toEqual([{ kind: 'text', text: 'ok' }]);
  });

  it.each([
    [401, 'auth'],
    [400, 'bad_request'],
  ] as const)('does not retry %i (%s)', async (status, code) => {
    const { clock, delays } = recordingClock();
    await using provider = await startScriptedProvider({ replies: [{ status }, { text: 'never' }] });
    const error = await modelError(
      executor({ clock, retry: { maxAttempts: 3 } })
        .stream(hello, { provider: provider.config() })
        .step(),
    );
    expect(error.code).toBe(code);
    expect(delays).toEqual([]);
    expect(provider.pending).toBe(1);
  });

  it('does not retry protocol errors', async () => {
    const { clock } = recordingClock();
    await using provider = await startScriptedProvider({
      replies: [{ raw: 'data: nope\n\n' }, { text: 'never' }],
    });
    const error = await modelError(
      executor({ clock, retry: { maxAttempts: 3 } })
        .stream(hello, { provider: provider.config() })
        .step(),
    );
    expect(error.code).toBe('protocol');
    expect(provider.pending).toBe(1);
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
