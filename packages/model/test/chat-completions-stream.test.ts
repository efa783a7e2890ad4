import { describe, expect, it } from 'vitest';
import { startScriptedProvider } from '../src/testing.js';
import { collect, executor, hello, modelError } from './support.js';

// The exact bytes of the seeds' `respond` helper (engine-lifetime.rs).
const seedFirst = (tool: boolean) =>
  JSON.stringify({
    id: 'reply',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'test',
    choices: [
      {
        index: 0,
        delta: tool
          ? {
              tool_calls: [
                {
                  index: 0,
                  id: 'call-1',
                  type: 'function',
                  function: { name: 'echo', arguments: '{"value":42}' },
                },
                {
                  index: 1,
                  id: 'call-2',
                  type: 'function',
                  function: { name: 'echo', arguments: '{"value":43}' },
                },
              ],
            }
          : { content: 'done' },
        finish_reason: null,
      },
    ],
  });
const seedLast = (tool: boolean) =>
  JSON.stringify({
    id: 'reply',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'test',
    choices: [{ index: 0, delta: {}, finish_reason: tool ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 },
  });
export const seedBody = (tool: boolean) =>
  `data: ${seedFirst(tool)}\n\ndata: ${seedLast(tool)}\n\ndata: [DONE]\n\n`;

const usage = { inputTokens: 4, outputTokens: 3, totalTokens: 7 };

describe('chat completions stream', () => {
  it("parses the seeds' parallel tool-call answer into the exact ModelStep and observations", async () => {
    await using provider = await startScriptedProvider({ replies: [{ raw: seedBody(true) }] });
    const { observations, step } = await collect(executor(), hello, { provider: provider.config() });
    expect(step).toEqual({
      parts: [
        { kind: 'tool_call', call: { id: 'call-1', name: 'echo', input: { value: 42 } } },
        { kind: 'tool_call', call: { id: 'call-2', name: 'echo', input: { value: 43 } } },
      ],
      finishReason: 'tool_calls',
      usage,
      responseId: 'reply',
      model: 'test',
    });
    expect(observations).toEqual([
      { kind: 'tool_call_delta', index: 0, id: 'call-1', name: 'echo', argumentsDelta: '{"value":42}' },
      { kind: 'tool_call_delta', index: 1, id: 'call-2', name: 'echo', argumentsDelta: '{"value":43}' },
    ]);
  });

  it("parses the seeds' text answer into the exact ModelStep", async () => {
    await using provider = await startScriptedProvider({ replies: [{ raw: seedBody(false) }] });
    const { observations, step } = await collect(executor(), hello, { provider: provider.config() });
    expect(step).toEqual({
      parts: [{ kind: 'text', text: 'done' }],
      finishReason: 'stop',
      usage,
      responseId: 'reply',
      model: 'test',
    });
    expect(observations).toEqual([{ kind: 'text_delta', text: 'done' }]);
  });

  it('the scripted provider opens with the role, ends with usage only when asked, and answers JSON when not streaming', async () => {
    await using provider = await startScriptedProvider({
      replies: [{ text: 'done' }, { text: 'done' }, { text: 'done' }],
    });
    const post = (body: Record<string, unknown>) =>
      fetch(`${provider.baseUrl}/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: 'test', messages: [], ...body }),
      });
    const chunks = async (response: Response) =>
      (await response.text())
        .split('\n\n')
        .filter((event) => event.startsWith('data: {'))
        .map((event) => JSON.parse(event.slice(6)) as { choices: { delta: unknown }[]; usage?: unknown });
    const withUsage = await chunks(await post({ stream: true, stream_options: { include_usage: true } }));
    expect(withUsage[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: 'done', refusal: null });
    expect(withUsage.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 4, completion_tokens: 3 },
    });
    const without = await chunks(await post({ stream: true }));
    expect(without.some((chunk) => chunk.usage !== undefined)).toBe(false);
    const whole = await post({});
    expect(whole.headers.get('content-type')).toBe('application/json');
    expect(await whole.json()).toMatchObject({
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }],
    });
  });

  it('assembles parallel tool calls whose arguments arrive in pieces across deltas, by index', async () => {
    await using provider = await startScriptedProvider({
      replies: [
        {
          transfer: 'chunked',
          toolCalls: [
            { id: 'a', name: 'read', arguments: ['{"pa', 'th":"x', '.txt"}'] },
            { id: 'b', name: 'list', arguments: ['{"dir"', ':"/"}'] },
          ],
        },
      ],
    });
    const { observations, step } = await collect(executor(), hello, { provider: provider.config() });
    expect(step.parts).toEqual([
      { kind: 'tool_call', call: { id: 'a', name: 'read', input: { path: 'x.txt' } } },
      { kind: 'tool_call', call: { id: 'b', name: 'list', input: { dir: '/' } } },
    ]);
    expect(observations.filter((o) => o.kind === 'tool_call_delta')).toHaveLength(5);
    // OpenAI streams one call after another: header and pieces of 0, then of 1.
    expect(observations.map((o) => (o.kind === 'tool_call_delta' ? o.index : -1))).toEqual([0, 0, 0, 1, 1]);
  });

  it('interleaved deltas of two calls go to the call their index names', async () => {
    const chunk = (delta: unknown, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'r', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const call = (index: number, fields: Record<string, unknown>) => ({ tool_calls: [{ index, ...fields }] });
    await using provider = await startScriptedProvider({
      replies: [
        {
          raw: [
            chunk(call(1, { id: 'second', function: { name: 'two', arguments: '' } })),
            chunk(call(0, { id: 'first', function: { name: 'one', arguments: '{"n":' } })),
            chunk(call(1, { function: { arguments: '{"n":2}' } })),
            chunk(call(0, { function: { arguments: '1}' } })),
            chunk({}, 'tool_calls'),
            'data: [DONE]\n\n',
          ],
        },
      ],
    });
    const { step } = await collect(executor(), hello, { provider: provider.config() });
    expect(step.parts).toEqual([
      { kind: 'tool_call', call: { id: 'second', name: 'two', input: { n: 2 } } },
      { kind: 'tool_call', call: { id: 'first', name: 'one', input: { n: 1 } } },
    ]);
  });

  it('reads chunked and Content-Length bodies to the same step', async () => {
    const answer = {
      text: ['Hel', 'lo ', 'wörld'],
      reasoning: 'thinking',
      toolCalls: [{ id: 'c', name: 't', arguments: { a: 1 } }],
    };
    await using provider = await startScriptedProvider({
      replies: [answer, { ...answer, transfer: 'chunked' as const, chunkDelayMs: 2 }],
    });
    const whole = await collect(executor(), hello, { provider: provider.config() });
    const chunked = await collect(executor(), hello, { provider: provider.config() });
    expect(chunked).toEqual(whole);
    expect(whole.step.parts).toEqual([
      { kind: 'reasoning', text: 'thinking' },
      { kind: 'text', text: 'Hello wörld' },
      { kind: 'tool_call', call: { id: 'c', name: 't', input: { a: 1 } } },
    ]);
  });

  it('marks a tool call whose arguments are not JSON as invalid, keeping the raw text, without failing the step', async () => {
    await using provider = await startScriptedProvider({
      replies: [
        {
          toolCalls: [
            { id: 'bad', name: 'echo', arguments: '{"value": 4' },
            { id: 'empty', name: 'noop', arguments: '' },
          ],
        },
      ],
    });
    const { step } = await collect(executor(), hello, { provider: provider.config() });
    expect(step.parts).toEqual([
      { kind: 'tool_call', call: { id: 'bad', name: 'echo', input: null, invalidArguments: '{"value": 4' } },
      { kind: 'tool_call', call: { id: 'empty', name: 'noop', input: {} } },
    ]);
  });

  it.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['tool_calls', 'tool_calls'],
    ['content_filter', 'content_filter'],
    ['function_call', 'tool_calls'],
    ['end_turn', 'stop'],
    ['max_tokens', 'length'],
    ['error', 'error'],
  ])('maps finish_reason %s to %s', async (wire, normalised) => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'x', finishReason: wire }] });
    const { step } = await collect(executor(), hello, { provider: provider.config() });
    expect(step.finishReason).toBe(normalised);
  });

  it('an unknown finish_reason is a protocol error naming it', async () => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'x', finishReason: 'banana' }] });
    const error = await modelError(executor().stream(hello, { provider: provider.config() }).step());
    expect(error).toMatchObject({ code: 'protocol', issue: 'unknown_finish_reason' });
    expect(error.message).toContain('banana');
  });

  it('the legacy function_call delta becomes a tool call', async () => {
    const chunk = (delta: unknown, finish: string | null = null) =>
      `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    await using provider = await startScriptedProvider({
      replies: [
        {
          raw: [
            chunk({ function_call: { name: 'lookup', arguments: '{"q":' } }),
            chunk({ function_call: { arguments: '"x"}' } }),
            chunk({}, 'function_call'),
            'data: [DONE]\n\n',
          ],
        },
      ],
    });
    const { step } = await collect(executor(), hello, { provider: provider.config() });
    expect(step).toMatchObject({
      parts: [{ kind: 'tool_call', call: { id: 'call_0', name: 'lookup', input: { q: 'x' } } }],
      finishReason: 'tool_calls',
    });
  });

  it('reads usage from a trailing chunk without choices, with reasoning and cached tokens', async () => {
    const chunks = [
      { choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] },
      { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
      {
        choices: [],
        usage: {
          prompt_tokens: 10,
          completion_tokens: 5,
          total_tokens: 15,
          prompt_tokens_details: { cached_tokens: 6 },
          completion_tokens_details: { reasoning_tokens: 2 },
        },
      },
    ];
    await using provider = await startScriptedProvider({
      replies: [{ raw: `${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('')}data: [DONE]\n\n` }],
    });
    const { step } = await collect(executor(), hello, { provider: provider.config() });
    expect(step.usage).toEqual({
      inputTokens: 10,
      outputTokens: 5,
      totalTokens: 15,
      cachedInputTokens: 6,
      reasoningTokens: 2,
    });
  });

  it('a stream that ends without finish_reason or [DONE] is a truncated protocol error', async () => {
    await using provider = await startScriptedProvider({
      replies: [{ text: ['a', 'b'], truncateAfterChunks: 1 }],
    });
    const stream = executor().stream(hello, { provider: provider.config() });
    const error = await modelError(stream.step());
    expect(error).toMatchObject({ code: 'protocol', issue: 'truncated' });
    expect(stream.observed).toBe(1);
  });

  it('a stream that has a finish_reason but no [DONE] still completes', async () => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'ok', truncateAfterChunks: 2 }] });
    const { step } = await collect(executor(), hello, { provider: provider.config() });
    expect(step.finishReason).toBe('stop');
  });

  it.each([
    ['data that is not JSON', 'data: garbage\n\n', 'malformed_json'],
    ['a line that is not SSE', 'this is not sse\n\n', 'malformed_sse'],
    ['a JSON array chunk', 'data: [1,2]\n\n', 'malformed_json'],
  ])('garbage SSE (%s) is a typed protocol error', async (_name, raw, issue) => {
    await using provider = await startScriptedProvider({ replies: [{ raw }] });
    const error = await modelError(executor().stream(hello, { provider: provider.config() }).step());
    expect(error).toMatchObject({ code: 'protocol', issue });
  });

  it('a 200 with an HTML body is a protocol error that says to check baseUrl', async () => {
    await using provider = await startScriptedProvider({
      replies: [
        { raw: '<html><title>Sign in</title></html>', contentType: 'text/html' },
        { raw: '<!doctype html><html><body>proxy</body></html>' },
      ],
    });
    for (let i = 0; i < 2; i++) {
      const error = await modelError(executor().stream(hello, { provider: provider.config() }).step());
      expect(error).toMatchObject({ code: 'protocol', issue: 'html_body' });
      expect(error.message).toContain('baseUrl');
    }
  });

  it('a 200 with a JSON error body is mapped by its type; a plain JSON answer is not_a_stream', async () => {
    await using provider = await startScriptedProvider({
      replies: [
        {
          raw: JSON.stringify({ error: { type: 'rate_limit_exceeded', message: 'slow down' } }),
          contentType: 'application/json',
        },
        { raw: JSON.stringify({ choices: [] }), contentType: 'application/json' },
      ],
    });
    const limited = await modelError(executor().stream(hello, { provider: provider.config() }).step());
    expect(limited.code).toBe('rate_limited');
    const plain = await modelError(executor().stream(hello, { provider: provider.config() }).step());
    expect(plain).toMatchObject({ code: 'protocol', issue: 'not_a_stream' });
  });

  it('an error object inside the stream becomes a typed error after the observations before it', async () => {
    await using provider = await startScriptedProvider({
      replies: [
        {
          raw: [
            `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'par' }, finish_reason: null }] })}\n\n`,
            `data: ${JSON.stringify({ error: { type: 'server_error', message: 'overloaded' } })}\n\n`,
          ],
        },
      ],
    });
    const stream = executor().stream(hello, { provider: provider.config() });
    const seen: unknown[] = [];
    const error = await modelError(
      (async () => {
        for await (const observation of stream) seen.push(observation);
      })(),
    );
    expect(seen).toEqual([{ kind: 'text_delta', text: 'par' }]);
    expect(error.code).toBe('server');
    expect(await modelError(stream.step())).toBe(error);
  });

  it('step() works without iterating, and a late iterator still sees every observation', async () => {
    await using provider = await startScriptedProvider({
      replies: [{ text: ['a', 'b', 'c'], transfer: 'chunked' }],
    });
    const stream = executor().stream(hello, { provider: provider.config() });
    const step = await stream.step();
    expect(step.parts).toEqual([{ kind: 'text', text: 'abc' }]);
    const late: unknown[] = [];
    for await (const observation of stream) late.push(observation);
    expect(late).toEqual(['a', 'b', 'c'].map((text) => ({ kind: 'text_delta', text })));
  });
});
