import { describe, expect, it } from 'vitest';
import type { ProviderKind } from '../src/index.js';
import { startScriptedProvider } from '../src/testing.js';
import { collect, executor, hello, modelError } from './support.js';

const sse = (events: readonly Record<string, unknown>[]) =>
  events.map((event) => `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`).join('');

// A Responses stream in the shape the OpenAI API sends (abridged: content-part events kept).
const responsesWire = sse([
  {
    type: 'response.created',
    sequence_number: 0,
    response: { id: 'resp_9', object: 'response', model: 'model-y', status: 'in_progress' },
  },
  { type: 'response.in_progress', sequence_number: 1, response: { id: 'resp_9', status: 'in_progress' } },
  {
    type: 'response.output_item.added',
    output_index: 0,
    item: { id: 'rs_1', type: 'reasoning', summary: [] },
  },
  {
    type: 'response.reasoning_summary_text.delta',
    item_id: 'rs_1',
    output_index: 0,
    summary_index: 0,
    delta: 'Plan',
  },
  { type: 'response.output_item.done', output_index: 0, item: { id: 'rs_1', type: 'reasoning' } },
  {
    type: 'response.output_item.added',
    output_index: 1,
    item: { id: 'msg_1', type: 'message', role: 'assistant', content: [] },
  },
  {
    type: 'response.content_part.added',
    item_id: 'msg_1',
    output_index: 1,
    content_index: 0,
    part: { type: 'output_text', text: '' },
  },
  { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'Hi ' },
  { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'there' },
  {
    type: 'response.output_text.done',
    item_id: 'msg_1',
    output_index: 1,
    content_index: 0,
    text: 'Hi there',
  },
  {
    type: 'response.output_item.added',
    output_index: 2,
    item: { id: 'fc_1', type: 'function_call', call_id: 'call_a', name: 'get_weather', arguments: '' },
  },
  { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 2, delta: '{"city":' },
  { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 2, delta: '"Paris"}' },
  {
    type: 'response.function_call_arguments.done',
    item_id: 'fc_1',
    output_index: 2,
    arguments: '{"city":"Paris"}',
  },
  {
    type: 'response.output_item.added',
    output_index: 3,
    item: { id: 'fc_2', type: 'function_call', call_id: 'call_b', name: 'get_time', arguments: '' },
  },
  {
    type: 'response.function_call_arguments.done',
    item_id: 'fc_2',
    output_index: 3,
    arguments: '{"tz":"CET"}',
  },
  {
    type: 'response.completed',
    response: {
      id: 'resp_9',
      model: 'model-y',
      status: 'completed',
      usage: {
        input_tokens: 20,
        output_tokens: 9,
        total_tokens: 29,
        input_tokens_details: { cached_tokens: 4 },
        output_tokens_details: { reasoning_tokens: 3 },
      },
    },
  },
]);

// A Messages stream in the shape the Anthropic API sends.
const anthropicWire = sse([
  {
    type: 'message_start',
    message: {
      id: 'msg_01',
      type: 'message',
      role: 'assistant',
      model: 'model-x',
      content: [],
      stop_reason: null,
      usage: { input_tokens: 12, cache_read_input_tokens: 5, output_tokens: 1 },
    },
  },
  { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me see' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'ping' },
  { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Checking' } },
  { type: 'content_block_stop', index: 1 },
  {
    type: 'content_block_start',
    index: 2,
    content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} },
  },
  { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '' } },
  {
    type: 'content_block_delta',
    index: 2,
    delta: { type: 'input_json_delta', partial_json: '{"city": "Pa' },
  },
  { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: 'ris"}' } },
  { type: 'content_block_stop', index: 2 },
  {
    type: 'content_block_start',
    index: 3,
    content_block: { type: 'tool_use', id: 'toolu_2', name: 'now', input: {} },
  },
  { type: 'content_block_stop', index: 3 },
  {
    type: 'message_delta',
    delta: { stop_reason: 'tool_use', stop_sequence: null },
    usage: { output_tokens: 30 },
  },
  { type: 'message_stop' },
]);

describe('responses and anthropic streams normalise to the same ModelStep', () => {
  it('a Responses stream: reasoning, text, two function calls (one sent only whole), usage', async () => {
    await using provider = await startScriptedProvider({ replies: [{ raw: responsesWire }] });
    const { observations, step } = await collect(executor(), hello, {
      provider: provider.config({ kind: 'openai_responses' }),
    });
    expect(step).toEqual({
      parts: [
        { kind: 'reasoning', text: 'Plan' },
        { kind: 'text', text: 'Hi there' },
        { kind: 'tool_call', call: { id: 'call_a', name: 'get_weather', input: { city: 'Paris' } } },
        { kind: 'tool_call', call: { id: 'call_b', name: 'get_time', input: { tz: 'CET' } } },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 20, outputTokens: 9, totalTokens: 29, cachedInputTokens: 4, reasoningTokens: 3 },
      responseId: 'resp_9',
      model: 'model-y',
    });
    expect(observations.filter((o) => o.kind === 'tool_call_delta').map((o) => o.index)).toEqual([
      0, 0, 0, 1, 1,
    ]);
  });

  it('an Anthropic stream: thinking, text, two tool_use blocks (one without input), usage with cache reads', async () => {
    await using provider = await startScriptedProvider({ replies: [{ raw: anthropicWire }] });
    const { observations, step } = await collect(executor(), hello, {
      provider: provider.config({ kind: 'anthropic_messages' }),
    });
    expect(step).toEqual({
      parts: [
        { kind: 'reasoning', text: 'Let me see' },
        { kind: 'text', text: 'Checking' },
        { kind: 'tool_call', call: { id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } } },
        { kind: 'tool_call', call: { id: 'toolu_2', name: 'now', input: {} } },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 17, outputTokens: 30, totalTokens: 47, cachedInputTokens: 5 },
      responseId: 'msg_01',
      model: 'model-x',
    });
    expect(observations.slice(0, 2)).toEqual([
      { kind: 'reasoning_delta', text: 'Let me see' },
      { kind: 'text_delta', text: 'Checking' },
    ]);
  });

  const kinds: readonly ProviderKind[] = [
    'openai_chat_completions',
    'openai_responses',
    'anthropic_messages',
  ];

  it.each(kinds)('%s: the same scripted answer gives the same parts from every wire', async (kind) => {
    const answer = {
      reasoning: 'r',
      text: ['a', 'b'],
      toolCalls: [
        { id: 'x', name: 'f', arguments: ['{"k"', ':1}'] },
        { id: 'y', name: 'g', arguments: 'not json' },
      ],
    };
    await using provider = await startScriptedProvider({ replies: [answer] });
    const { step } = await collect(executor(), hello, { provider: provider.config({ kind }) });
    expect(step.parts).toEqual([
      { kind: 'reasoning', text: 'r' },
      { kind: 'text', text: 'ab' },
      { kind: 'tool_call', call: { id: 'x', name: 'f', input: { k: 1 } } },
      { kind: 'tool_call', call: { id: 'y', name: 'g', input: null, invalidArguments: 'not json' } },
    ]);
    expect(step.finishReason).toBe('tool_calls');
    expect(step.usage).toMatchObject({ inputTokens: 4, outputTokens: 3, totalTokens: 7 });
  });

  it.each(kinds)('%s: length and content_filter map across wires', async (kind) => {
    await using provider = await startScriptedProvider({
      replies: [
        { text: 'x', finishReason: 'length' },
        { text: 'x', finishReason: 'content_filter' },
      ],
    });
    // Anthropic has no filter stop reason: its nearest word is `refusal`.
    const expected = ['length', kind === 'anthropic_messages' ? 'refusal' : 'content_filter'];
    for (const reason of expected) {
      const { step } = await collect(executor(), hello, { provider: provider.config({ kind }) });
      expect(step.finishReason).toBe(reason);
    }
  });

  it.each(kinds)('%s: an unknown stop reason is a protocol error', async (kind) => {
    await using provider = await startScriptedProvider({ replies: [{ text: 'x', finishReason: 'mystery' }] });
    const error = await modelError(
      executor()
        .stream(hello, { provider: provider.config({ kind }) })
        .step(),
    );
    expect(error).toMatchObject({ code: 'protocol', issue: 'unknown_finish_reason' });
    expect(error.message).toContain('mystery');
  });

  it.each(kinds)('%s: a stream cut before its terminal event is truncated', async (kind) => {
    await using provider = await startScriptedProvider({
      replies: [{ text: ['a', 'b'], truncateAfterChunks: 2 }],
    });
    const error = await modelError(
      executor()
        .stream(hello, { provider: provider.config({ kind }) })
        .step(),
    );
    expect(error).toMatchObject({ code: 'protocol', issue: 'truncated' });
  });

  it.each([
    [
      'openai_responses',
      { type: 'response.failed', response: { error: { code: 'rate_limit_exceeded', message: 'slow' } } },
      'rate_limited',
    ],
    [
      'openai_responses',
      { type: 'error', code: 'context_length_exceeded', message: 'too long' },
      'context_overflow',
    ],
    [
      'anthropic_messages',
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      'server',
    ],
    [
      'anthropic_messages',
      { type: 'error', error: { type: 'authentication_error', message: 'bad' } },
      'auth',
    ],
  ] as const)('%s: in-stream error %j is %s', async (kind, event, code) => {
    await using provider = await startScriptedProvider({ replies: [{ raw: sse([event]) }] });
    const error = await modelError(
      executor()
        .stream(hello, { provider: provider.config({ kind }) })
        .step(),
    );
    expect(error.code).toBe(code);
  });
});
