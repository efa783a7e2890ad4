import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { type ScriptedAnswer, type ScriptedProvider, startScriptedProvider } from '../src/testing.js';
import { executor, hello } from './support.js';

// The official clients are strict about the wire (a missing role, an event out of order
// or a missing `response.completed` makes their stream helpers throw): whatever they
// accept, a real client accepts.

const thinking: ScriptedAnswer = { reasoning: ['Let me ', 'think.'], text: ['Hello', ', world'] };
const calls: ScriptedAnswer = {
  toolCalls: [
    { id: 'call_a', name: 'read', arguments: ['{"pa', 'th":"a.txt"}'] },
    { id: 'call_b', name: 'list', arguments: { dir: '/' } },
  ],
};
const refusal: ScriptedAnswer = { refusal: ["I'm sorry, ", "I can't help with that."] };

function openai(provider: ScriptedProvider): OpenAI {
  return new OpenAI({ apiKey: 'test-key', baseURL: provider.baseUrl, maxRetries: 0 });
}

function anthropic(provider: ScriptedProvider): Anthropic {
  // The SDK adds `/v1` itself.
  return new Anthropic({ apiKey: 'test-key', baseURL: provider.baseUrl.replace(/\/v1$/, ''), maxRetries: 0 });
}

const chatMessages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'hi' }];

describe('the official openai client against the scripted Chat Completions wire', () => {
  it('chat.completions.stream() accumulates text, parallel tool calls and a refusal, with usage', async () => {
    await using provider = await startScriptedProvider({ replies: [thinking, calls, refusal] });
    const client = openai(provider);
    const options = { model: 'test', messages: chatMessages, stream_options: { include_usage: true } };

    const text = client.chat.completions.stream(options);
    const deltas: string[] = [];
    text.on('content', (delta) => deltas.push(delta));
    const first = await text.finalChatCompletion();
    expect(deltas).toEqual(['Hello', ', world']);
    expect(first.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'Hello, world' });
    expect(first.choices[0]?.finish_reason).toBe('stop');
    expect(first.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 });

    const second = await client.chat.completions.stream(options).finalChatCompletion();
    expect(second.choices[0]?.finish_reason).toBe('tool_calls');
    expect(second.choices[0]?.message.tool_calls).toEqual([
      { id: 'call_a', type: 'function', function: { name: 'read', arguments: '{"path":"a.txt"}' } },
      { id: 'call_b', type: 'function', function: { name: 'list', arguments: '{"dir":"/"}' } },
    ]);

    const third = await client.chat.completions.stream(options).finalChatCompletion();
    expect(third.choices[0]?.message.refusal).toBe("I'm sorry, I can't help with that.");
  });

  it('create() without stream gets a whole chat.completion, and with stream every chunk parses', async () => {
    await using provider = await startScriptedProvider({ replies: [calls, thinking] });
    const client = openai(provider);
    const whole = await client.chat.completions.create({ model: 'test', messages: chatMessages });
    expect(whole.object).toBe('chat.completion');
    expect(whole.choices[0]?.message.tool_calls?.map((call) => call.id)).toEqual(['call_a', 'call_b']);
    const stream = await client.chat.completions.create({
      model: 'test',
      messages: chatMessages,
      stream: true,
    });
    let content = '';
    for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
    expect(content).toBe('Hello, world');
  });
});

describe('the official openai client against the scripted Responses wire', () => {
  it('responses.stream() accumulates every output item to the same response as response.completed', async () => {
    await using provider = await startScriptedProvider({
      replies: [{ ...thinking, ...calls }, refusal],
    });
    const client = openai(provider);
    const stream = client.responses.stream({ model: 'test', input: 'hi' });
    const types = new Set<string>();
    for await (const event of stream) types.add(event.type);
    const response = await stream.finalResponse();
    for (const type of [
      'response.created',
      'response.in_progress',
      'response.content_part.added',
      'response.output_text.done',
      'response.function_call_arguments.done',
      'response.completed',
    ]) {
      expect(types).toContain(type);
    }
    expect(response.output[1]).toMatchObject({
      type: 'message',
      content: [{ type: 'output_text', text: 'Hello, world' }],
    });
    expect(response.output.map((item) => item.type)).toEqual([
      'reasoning',
      'message',
      'function_call',
      'function_call',
    ]);
    expect(response.output.filter((item) => item.type === 'function_call')).toMatchObject([
      { call_id: 'call_a', name: 'read', arguments: '{"path":"a.txt"}' },
      { call_id: 'call_b', name: 'list', arguments: '{"dir":"/"}' },
    ]);
    expect(response.usage).toMatchObject({ input_tokens: 4, output_tokens: 3, total_tokens: 7 });

    const refused = await client.responses.stream({ model: 'test', input: 'hi' }).finalResponse();
    expect(refused.output[0]).toMatchObject({
      type: 'message',
      content: [{ type: 'refusal', refusal: "I'm sorry, I can't help with that." }],
    });
  });

  it('create() without stream gets the whole response object', async () => {
    await using provider = await startScriptedProvider({ replies: [thinking] });
    const response = await openai(provider).responses.create({ model: 'test', input: 'hi' });
    expect(response).toMatchObject({ object: 'response', status: 'completed' });
    expect(response.output_text).toBe('Hello, world');
  });
});

describe('the official @anthropic-ai/sdk client against the scripted Messages wire', () => {
  const request = { model: 'test', max_tokens: 100, messages: [{ role: 'user' as const, content: 'hi' }] };

  it('messages.stream() accumulates thinking, text, tool input and the stop reason', async () => {
    await using provider = await startScriptedProvider({ replies: [{ ...thinking, ...calls }, refusal] });
    const client = anthropic(provider);
    const stream = client.messages.stream(request);
    const text: string[] = [];
    stream.on('text', (delta) => text.push(delta));
    const message = await stream.finalMessage();
    expect(text).toEqual(['Hello', ', world']);
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Let me think.', signature: 'scripted-signature' },
      { type: 'text', text: 'Hello, world' },
      { type: 'tool_use', id: 'call_a', name: 'read', input: { path: 'a.txt' } },
      { type: 'tool_use', id: 'call_b', name: 'list', input: { dir: '/' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input_tokens: 4, output_tokens: 3 });

    const refused = await client.messages.stream(request).finalMessage();
    expect(refused.stop_reason).toBe('refusal');
  });

  it('create() without stream gets the whole message', async () => {
    await using provider = await startScriptedProvider({ replies: [thinking] });
    const message = await anthropic(provider).messages.create(request);
    expect(message).toMatchObject({ type: 'message', role: 'assistant', stop_reason: 'end_turn' });
    expect(message.content.at(-1)).toEqual({ type: 'text', text: 'Hello, world' });
  });
});

describe('the executor reads what the official clients accepted', () => {
  it.each(['openai_chat_completions', 'openai_responses', 'anthropic_messages'] as const)(
    '%s: the same scripted answers give the steps they say',
    async (kind) => {
      await using provider = await startScriptedProvider({ replies: [{ ...thinking, ...calls }, refusal] });
      const models = executor();
      const step = await models.stream(hello, { provider: provider.config({ kind }) }).step();
      expect(step.parts).toEqual([
        { kind: 'reasoning', text: 'Let me think.' },
        { kind: 'text', text: 'Hello, world' },
        { kind: 'tool_call', call: { id: 'call_a', name: 'read', input: { path: 'a.txt' } } },
        { kind: 'tool_call', call: { id: 'call_b', name: 'list', input: { dir: '/' } } },
      ]);
      expect(step.finishReason).toBe('tool_calls');
      const refused = await models.stream(hello, { provider: provider.config({ kind }) }).step();
      expect(refused.finishReason).toBe('refusal');
      // Anthropic has no refusal part: its refusal is text with the `refusal` stop reason.
      const part = kind === 'anthropic_messages' ? 'text' : 'refusal';
      expect(refused.parts).toEqual([{ kind: part, text: "I'm sorry, I can't help with that." }]);
    },
  );
});
