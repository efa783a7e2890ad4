import { contentDigest, rejectionSentence } from '@factum/agent-facts';
import { describe, expect, it } from 'vitest';
import {
  type ModelRequest,
  type ProviderKind,
  RequestDigester,
  requestDigest,
  routeIdentity,
} from '../src/index.js';
import { startScriptedProvider } from '../src/testing.js';
import { executor } from './support.js';

const conversation: ModelRequest = {
  messages: [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'question first' },
    {
      role: 'assistant',
      parts: [
        { kind: 'reasoning', text: 'hidden' },
        { kind: 'text', text: 'calling' },
        { kind: 'tool_call', call: { id: 'call-1', name: 'echo', input: { value: 42 } } },
        { kind: 'tool_call', call: { id: 'call-2', name: 'echo', input: { value: 43 } } },
        {
          kind: 'tool_call',
          call: { id: 'call-3', name: 'echo', input: null, invalidArguments: '{"value":' },
        },
      ],
    },
    { role: 'tool', callId: 'call-1', name: 'echo', result: { kind: 'value', value: { value: 42 } } },
    {
      role: 'tool',
      callId: 'call-2',
      name: 'echo',
      result: { kind: 'rejected', rejection: { kind: 'cancelled' } },
    },
    { role: 'tool', callId: 'call-3', name: 'echo', result: { kind: 'error', message: 'boom' } },
    { role: 'user', content: 'question next' },
  ],
  tools: [
    { name: 'echo', description: 'echo a value', inputSchema: { type: 'object', properties: { value: {} } } },
  ],
  maxOutputTokens: 120,
};

const cancelled = rejectionSentence({ kind: 'cancelled' });

describe('request mapping', () => {
  it('chat completions: every role, tool calls with JSON-string arguments, tool results, rejection sentence', async () => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'ok' }] });
    await executor().stream(conversation, { provider: provider.config() }).step();
    expect(provider.requests[0]).toEqual({
      model: 'test',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'question first' },
        {
          role: 'assistant',
          content: 'calling',
          tool_calls: [
            { id: 'call-1', type: 'function', function: { name: 'echo', arguments: '{"value":42}' } },
            { id: 'call-2', type: 'function', function: { name: 'echo', arguments: '{"value":43}' } },
            { id: 'call-3', type: 'function', function: { name: 'echo', arguments: '{"value":' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call-1', content: '{"value":42}' },
        { role: 'tool', tool_call_id: 'call-2', content: cancelled },
        { role: 'tool', tool_call_id: 'call-3', content: 'failed: boom' },
        { role: 'user', content: 'question next' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'echo',
            description: 'echo a value',
            parameters: { type: 'object', properties: { value: {} } },
          },
        },
      ],
      max_tokens: 120,
      stream: true,
      stream_options: { include_usage: true },
    });
    const messages = provider.requests[0]?.messages as { role: string; content: string }[];
    expect(JSON.parse(messages[3]?.content ?? '')).toEqual({ value: 42 });
    expect(messages[4]?.content).toContain('did not run: the run was cancelled');
  });

  it('sends content-type, the config headers and Authorization: Bearer <key>', async () => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'ok' }, { text: 'ok' }] });
    await executor()
      .stream(conversation, { provider: provider.config({ headers: { 'X-Org': 'acme' } }) })
      .step();
    await executor()
      .stream(conversation, { provider: provider.config({ auth: { none: true } }) })
      .step();
    const [withKey, without] = provider.recorded;
    expect(withKey?.path).toBe('/v1/chat/completions');
    expect(withKey?.method).toBe('POST');
    expect(withKey?.headers).toMatchObject({
      authorization: 'Bearer test-key',
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'x-org': 'acme',
    });
    expect(without?.headers.authorization).toBeUndefined();
  });

  it('merges providerOptions and then bodyOverlay into the body (overlay wins, objects merge deeply, stream stays on)', async () => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'ok' }] });
    const config = provider.config({
      bodyOverlay: {
        temperature: 0.1,
        metadata: { team: 'core' },
        stream: false,
        stream_options: { extra: 1 },
      },
    });
    await executor()
      .stream(
        {
          ...conversation,
          providerOptions: { temperature: 0.9, top_p: 0.5, metadata: { run: 'r1', team: 'x' } },
        },
        { provider: config },
      )
      .step();
    expect(provider.requests[0]).toMatchObject({
      temperature: 0.1,
      top_p: 0.5,
      metadata: { run: 'r1', team: 'core' },
      stream: true,
      stream_options: { include_usage: true, extra: 1 },
    });
  });

  it('capabilities pick the max-tokens field, the system role and whether usage is requested', async () => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'ok' }] });
    const config = provider.config({
      capabilities: { maxTokensField: 'max_completion_tokens', systemRole: 'developer', streamUsage: false },
    });
    await executor().stream(conversation, { provider: config }).step();
    const body = provider.requests[0] ?? {};
    expect(body.max_completion_tokens).toBe(120);
    expect(body.max_tokens).toBeUndefined();
    expect(body.stream_options).toBeUndefined();
    expect((body.messages as { role: string }[])[0]?.role).toBe('developer');
  });

  it('responses: input items for messages, function calls and outputs; flat function tools', async () => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'ok' }] });
    await executor()
      .stream(conversation, { provider: provider.config({ kind: 'openai_responses' }) })
      .step();
    expect(provider.recorded[0]?.path).toBe('/v1/responses');
    expect(provider.recorded[0]?.headers.authorization).toBe('Bearer test-key');
    expect(provider.requests[0]).toEqual({
      model: 'test',
      input: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'question first' },
        { role: 'assistant', content: 'calling' },
        { type: 'function_call', call_id: 'call-1', name: 'echo', arguments: '{"value":42}' },
        { type: 'function_call', call_id: 'call-2', name: 'echo', arguments: '{"value":43}' },
        { type: 'function_call', call_id: 'call-3', name: 'echo', arguments: '{"value":' },
        { type: 'function_call_output', call_id: 'call-1', output: '{"value":42}' },
        { type: 'function_call_output', call_id: 'call-2', output: cancelled },
        { type: 'function_call_output', call_id: 'call-3', output: 'failed: boom' },
        { role: 'user', content: 'question next' },
      ],
      tools: [
        {
          type: 'function',
          name: 'echo',
          description: 'echo a value',
          parameters: { type: 'object', properties: { value: {} } },
        },
      ],
      max_output_tokens: 120,
      stream: true,
    });
  });

  it('anthropic: system lifted out, tool results merged into one user turn, x-api-key and anthropic-version', async () => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'ok' }, { text: 'ok' }] });
    await executor()
      .stream(conversation, { provider: provider.config({ kind: 'anthropic_messages' }) })
      .step();
    const record = provider.recorded[0];
    expect(record?.path).toBe('/v1/messages');
    expect(record?.headers).toMatchObject({ 'x-api-key': 'test-key', 'anthropic-version': '2023-06-01' });
    expect(record?.headers.authorization).toBeUndefined();
    expect(provider.requests[0]).toEqual({
      model: 'test',
      max_tokens: 120,
      system: 'be brief',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'question first' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'calling' },
            { type: 'tool_use', id: 'call-1', name: 'echo', input: { value: 42 } },
            { type: 'tool_use', id: 'call-2', name: 'echo', input: { value: 43 } },
            { type: 'tool_use', id: 'call-3', name: 'echo', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call-1', content: '{"value":42}' },
            { type: 'tool_result', tool_use_id: 'call-2', content: cancelled, is_error: true },
            { type: 'tool_result', tool_use_id: 'call-3', content: 'failed: boom', is_error: true },
            { type: 'text', text: 'question next' },
          ],
        },
      ],
      tools: [
        {
          name: 'echo',
          description: 'echo a value',
          input_schema: { type: 'object', properties: { value: {} } },
        },
      ],
      stream: true,
    });
    await executor()
      .stream(
        { messages: [{ role: 'user', content: 'hi' }], tools: [] },
        { provider: provider.config({ kind: 'anthropic_messages' }) },
      )
      .step();
    expect(provider.requests[1]?.max_tokens).toBe(4096);
  });

  it('keeps a query string in baseUrl and appends the endpoint path before it', async () => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'ok' }] });
    await executor()
      .stream(conversation, {
        provider: provider.config({ baseUrl: `${provider.baseUrl}/?api-version=2024` }),
      })
      .step();
    expect(provider.recorded[0]?.path).toBe('/v1/chat/completions?api-version=2024');
  });

  it('requestDigest covers what is sent and nothing secret; routeIdentity is kind, base URL and model', () => {
    const base = { kind: 'openai_chat_completions', model: 'm', baseUrl: 'http://h/v1' } as const;
    const digest = requestDigest({ ...base, auth: { apiKey: 'one' } }, conversation);
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(requestDigest({ ...base, auth: { apiKey: 'two' }, headers: { 'x-a': 'b' } }, conversation)).toBe(
      digest,
    );
    expect(
      requestDigest({ ...base, auth: { none: true } }, { ...conversation, providerOptions: { seed: 1 } }),
    ).not.toBe(digest);
    expect(requestDigest({ ...base, model: 'other', auth: { none: true } }, conversation)).not.toBe(digest);
    expect(routeIdentity(base)).toBe('openai_chat_completions http://h/v1 m');
  });
});

describe('pre-rendered tool results', () => {
  it('a text outcome reaches the wire exactly as given', async () => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'ok' }] });
    const text = '{"value":42}\n[truncated: showing 12 of 90000 bytes; the full result is in the log]';
    await executor()
      .stream(
        {
          messages: [
            { role: 'user', content: 'q' },
            { role: 'assistant', parts: [{ kind: 'tool_call', call: { id: 'c', name: 'echo', input: {} } }] },
            { role: 'tool', callId: 'c', name: 'echo', result: { kind: 'text', text } },
          ],
          tools: [],
        },
        { provider: provider.config() },
      )
      .step();
    const messages = provider.requests[0]!.messages as { content?: unknown }[];
    expect(messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'c', content: text });
  });
});

describe('a body given with the request', () => {
  const kinds: readonly ProviderKind[] = [
    'openai_chat_completions',
    'openai_responses',
    'anthropic_messages',
  ];

  it.each(kinds)(
    '%s: the digester’s body goes on the wire as it is, the bytes its digest names',
    async (kind) => {
      await using provider = await startScriptedProvider({ replies: [{ text: 'ok' }, { text: 'ok' }] });
      const config = provider.config({ kind, bodyOverlay: { temperature: 0 } });
      const digester = new RequestDigester();
      const digest = digester.digest(config, conversation);
      const body = digester.body()!;
      await executor().stream(conversation, { provider: config, body }).step();
      await executor().stream(conversation, { provider: config }).step();
      const [given, made] = provider.recorded;
      expect(given!.text).toBe(body);
      expect(contentDigest(given!.text)).toBe(digest);
      expect(digest).toBe(requestDigest(config, conversation));
      // The same request as the executor makes it itself, in canonical key order.
      expect(given!.body).toEqual(made!.body);
      expect(given!.headers['content-type']).toBe('application/json');
    },
  );

  it('n > 1 from the options is refused with a body given too', async () => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'ok' }] });
    const request = { ...conversation, providerOptions: { n: 2 } };
    const digester = new RequestDigester();
    digester.digest(provider.config(), request);
    const failed = executor().stream(request, { provider: provider.config(), body: digester.body()! }).step();
    await expect(failed).rejects.toMatchObject({ code: 'bad_request' });
    expect(provider.recorded).toHaveLength(0);
  });
});
