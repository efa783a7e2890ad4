import { readFileSync } from 'node:fs';
import { ModelStepSchema } from '@factum/agent-facts';
import { describe, expect, it } from 'vitest';
import type { ProviderKind } from '../src/index.js';
import { startScriptedProvider } from '../src/testing.js';
import { collect, executor, hello, modelError, recordingClock } from './support.js';

// Streams recorded from real providers (trimmed copies; see fixtures/README.md), served
// byte for byte by a loopback server in uneven pieces, read through the executor.
function recorded(name: string): string[] {
  const text = readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += 173) pieces.push(text.slice(at, at + 173));
  return pieces;
}

describe('recorded refusals', () => {
  it('keeps a Chat Completions refusal as a refusal part and finishes refusal, not stop', async () => {
    await using provider = await startScriptedProvider({
      replies: [{ raw: recorded('chat-openai-refusal.sse') }],
    });
    const { observations, step } = await collect(executor(), hello, { provider: provider.config() });
    expect(step.parts).toEqual([{ kind: 'refusal', text: "I'm sorry, I can't assist with that request." }]);
    expect(step.finishReason).toBe('refusal');
    expect(observations.map((observation) => observation.kind)).not.toContain('text_delta');
    expect(observations[0]).toEqual({ kind: 'refusal_delta', text: "I'm" });
    expect(ModelStepSchema.parse(step)).toEqual(step);
  });

  it('keeps a Responses refusal apart from text', async () => {
    const event = (type: string, body: Record<string, unknown>) =>
      `event: ${type}\ndata: ${JSON.stringify({ type, ...body })}\n\n`;
    const raw = [
      event('response.created', { response: { id: 'resp_r', model: 'm' } }),
      event('response.output_item.added', { output_index: 0, item: { type: 'message', id: 'msg_r' } }),
      event('response.content_part.added', { output_index: 0, content_index: 0, part: { type: 'refusal' } }),
      event('response.refusal.delta', { output_index: 0, content_index: 0, delta: 'I cannot help' }),
      event('response.refusal.delta', { output_index: 0, content_index: 0, delta: ' with that.' }),
      event('response.completed', { response: { id: 'resp_r', status: 'completed' } }),
    ];
    await using provider = await startScriptedProvider({ replies: [{ raw }] });
    const { step } = await collect(executor(), hello, {
      provider: provider.config({ kind: 'openai_responses' }),
    });
    expect(step.parts).toEqual([{ kind: 'refusal', text: 'I cannot help with that.' }]);
    expect(step.finishReason).toBe('refusal');
  });

  it('says refusal when Anthropic stops with stop_reason refusal', async () => {
    await using provider = await startScriptedProvider({
      replies: [{ raw: recorded('anthropic-refusal.sse') }],
    });
    const { step } = await collect(executor(), hello, {
      provider: provider.config({ kind: 'anthropic_messages' }),
    });
    expect(step).toMatchObject({
      parts: [],
      finishReason: 'refusal',
      usage: { inputTokens: 18, outputTokens: 5 },
    });
  });
});

describe('recorded provider errors', () => {
  it('does not retry insufficient_quota: the recorded Responses error is final on the first attempt', async () => {
    await using provider = await startScriptedProvider({
      replies: [1, 2, 3].map(() => ({ raw: recorded('responses-error-insufficient-quota.sse') })),
    });
    const { clock, delays } = recordingClock();
    const error = await modelError(
      executor({ clock, retry: { maxAttempts: 3 } })
        .stream(hello, { provider: provider.config({ kind: 'openai_responses' }) })
        .step(),
    );
    expect(error.code).toBe('quota_exceeded');
    expect(error.retryable).toBe(false);
    expect(error.attempts).toBe(1);
    expect(error.message).toContain('You exceeded your current quota');
    expect(provider.recorded).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it('retries a recorded response.failed rate limit, then gives up saying how often it tried', async () => {
    await using provider = await startScriptedProvider({
      replies: [1, 2, 3].map(() => ({ raw: recorded('responses-failed-rate-limit.sse') })),
    });
    const { clock, delays } = recordingClock();
    const error = await modelError(
      executor({ clock, retry: { maxAttempts: 3 }, random: () => 0 })
        .stream(hello, { provider: provider.config({ kind: 'openai_responses' }) })
        .step(),
    );
    expect(error).toMatchObject({ code: 'rate_limited', attempts: 3 });
    expect(provider.recorded).toHaveLength(3);
    expect(delays).toHaveLength(2);
  });

  type Case = { readonly provider: string; readonly code: string; readonly retried: boolean };
  const cases: readonly Case[] = [
    { provider: 'insufficient_quota', code: 'quota_exceeded', retried: false },
    { provider: 'rate_limit_exceeded', code: 'rate_limited', retried: true },
    { provider: 'overloaded_error', code: 'server', retried: true },
    { provider: 'server_error', code: 'server', retried: true },
    { provider: 'context_length_exceeded', code: 'context_overflow', retried: false },
    { provider: 'content_filter', code: 'content_filtered', retried: false },
    { provider: 'content_policy_violation', code: 'content_filtered', retried: false },
  ];
  const inStream: Record<ProviderKind, (type: string) => string> = {
    openai_chat_completions: (type) =>
      `data: ${JSON.stringify({ error: { message: `provider says ${type}`, type, code: type } })}\n\n`,
    openai_responses: (type) =>
      `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, code: type, message: `provider says ${type}` } })}\n\n`,
    anthropic_messages: (type) =>
      `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message: `provider says ${type}` } })}\n\n`,
  };

  for (const kind of Object.keys(inStream) as ProviderKind[]) {
    for (const { provider: type, code, retried } of cases) {
      it(`maps ${kind} in-stream ${type} to ${code}, ${retried ? 'retried' : 'never retried'}`, async () => {
        await using provider = await startScriptedProvider({
          replies: [{ raw: inStream[kind](type) }, { raw: inStream[kind](type) }],
        });
        const { clock } = recordingClock();
        const error = await modelError(
          executor({ clock, retry: { maxAttempts: 2 } })
            .stream(hello, { provider: provider.config({ kind }) })
            .step(),
        );
        expect(error.code).toBe(code);
        expect(error.retryable).toBe(retried);
        expect(provider.recorded).toHaveLength(retried ? 2 : 1);
      });
    }
  }

  const httpCases = [
    {
      status: 429,
      body: { error: { type: 'insufficient_quota', code: 'insufficient_quota', message: 'quota' } },
      code: 'quota_exceeded',
      retried: false,
    },
    {
      status: 400,
      body: {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: 'Your credit balance is too low to access the API.',
        },
      },
      code: 'quota_exceeded',
      retried: false,
    },
    {
      status: 429,
      body: { error: { type: 'rate_limit_error', message: 'slow down' } },
      code: 'rate_limited',
      retried: true,
    },
    {
      status: 529,
      body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      code: 'server',
      retried: true,
    },
    {
      status: 400,
      body: { error: { code: 'content_policy_violation', message: 'flagged' } },
      code: 'content_filtered',
      retried: false,
    },
    {
      status: 400,
      body: { error: { code: 'context_length_exceeded', message: 'too long' } },
      code: 'context_overflow',
      retried: false,
    },
  ] as const;
  for (const { status, body, code, retried } of httpCases) {
    it(`maps HTTP ${status} ${JSON.stringify(body).slice(0, 60)} to ${code}`, async () => {
      await using provider = await startScriptedProvider({
        replies: [
          { status, body },
          { status, body },
        ],
      });
      const { clock } = recordingClock();
      const error = await modelError(
        executor({ clock, retry: { maxAttempts: 2 } })
          .stream(hello, { provider: provider.config() })
          .step(),
      );
      expect(error).toMatchObject({ code, status });
      expect(provider.recorded).toHaveLength(retried ? 2 : 1);
    });
  }
});

describe('recorded Responses output messages', () => {
  it('keeps two output message items as two text parts, each whole', async () => {
    await using provider = await startScriptedProvider({
      replies: [{ raw: recorded('responses-phase-cached.sse') }],
    });
    const { step } = await collect(executor(), hello, {
      provider: provider.config({ kind: 'openai_responses' }),
    });
    const done = readFileSync(new URL('./fixtures/responses-phase-cached.sse', import.meta.url), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('data: ') && line.includes('"response.output_text.done"'))
      .map((line) => (JSON.parse(line.slice(6)) as { text: string }).text);
    // The recording keeps only the first deltas of each message; each part is its own
    // message's deltas, a prefix of that message's final text, never glued to the other.
    expect(done).toHaveLength(2);
    expect(step.parts).toEqual([
      { kind: 'text', text: 'Got it' },
      { kind: 'text', text: 'Here are a few **AI' },
    ]);
    step.parts.forEach((part, index) => {
      expect(part.kind === 'text' && done[index]?.startsWith(part.text)).toBe(true);
    });
    expect(step.usage).toMatchObject({ inputTokens: 7112, cachedInputTokens: 3072, reasoningTokens: 64 });
  });
});

describe('recorded n = 3 choices', () => {
  it('keeps choice 0 of a stream that carries three, never merging the others', async () => {
    await using provider = await startScriptedProvider({
      replies: [{ raw: recorded('chat-openai-n3.sse') }],
    });
    const { step } = await collect(executor(), hello, { provider: provider.config() });
    const choice0 = readFileSync(new URL('./fixtures/chat-openai-n3.sse', import.meta.url), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .flatMap(
        (line) =>
          (JSON.parse(line.slice(6)) as { choices: { index: number; delta: { content?: string } }[] })
            .choices,
      )
      .filter((choice) => choice.index === 0)
      .map((choice) => choice.delta.content ?? '')
      .join('');
    expect(step.parts).toEqual([{ kind: 'text', text: choice0 }]);
    expect(JSON.parse(choice0)).toBeTypeOf('object');
  });

  it('refuses a request for n > 1 before sending it', async () => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'one' }] });
    const error = await modelError(
      executor()
        .stream({ ...hello, providerOptions: { n: 3 } }, { provider: provider.config() })
        .step(),
    );
    expect(error.code).toBe('bad_request');
    expect(error.message).toContain('n = 3');
    expect(provider.recorded).toHaveLength(0);
  });
});

describe('secrets in the base URL', () => {
  it('never quotes a query-string key or user info that a 404 body echoes back', async () => {
    const key = 'qk-Secret/Value+123';
    await using provider = await startScriptedProvider();
    const base = new URL(provider.baseUrl);
    base.username = 'gateway-user';
    base.password = 'pass-w0rd!';
    base.searchParams.set('key', key);
    const echoed = [
      `No route for POST ${base.pathname}/chat/completions?${base.searchParams.toString()}`,
      `(decoded: key=${key}, user gateway-user:pass-w0rd!, url ${base.toString()})`,
    ].join(' ');
    provider.script({ status: 404, body: { error: { message: echoed, type: 'not_found', code: key } } });
    const error = await modelError(
      executor()
        .stream(hello, { provider: provider.config({ baseUrl: base.toString(), auth: { none: true } }) })
        .step(),
    );
    expect(error.code).toBe('bad_request');
    expect(provider.recorded[0]?.path).toContain(encodeURIComponent(key));
    const shown = [error.message, JSON.stringify(error), String(error.cause ?? ''), error.stack ?? ''].join(
      '\n',
    );
    for (const secret of [
      key,
      encodeURIComponent(key),
      base.searchParams.toString(),
      'pass-w0rd!',
      'pass-w0rd%21',
    ]) {
      expect(shown).not.toContain(secret);
    }
    expect(error.message).toContain('[redacted]');
  });
});
