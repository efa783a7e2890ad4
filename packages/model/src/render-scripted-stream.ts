import type { ProviderKind } from './provider-config.js';
import type { ScriptedAnswer, ScriptedToolCall } from './scripted-reply.js';

type Pieces = readonly string[];

/** The SSE events (each a complete `data: …\n\n` block) of a scripted answer. */
export function renderScriptedStream(kind: ProviderKind, answer: ScriptedAnswer, model: string): string[] {
  switch (kind) {
    case 'openai_chat_completions':
      return renderChatCompletions(answer, model);
    case 'openai_responses':
      return renderResponses(answer, model);
    case 'anthropic_messages':
      return renderAnthropic(answer, model);
    default:
      return kind satisfies never;
  }
}

function pieces(value: string | readonly string[] | undefined): Pieces {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : value;
}

function argumentPieces(call: ScriptedToolCall): Pieces {
  const value = call.arguments;
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value as Pieces;
  return [JSON.stringify(value)];
}

function usageOf(answer: ScriptedAnswer): { input: number; output: number } {
  return { input: answer.usage?.inputTokens ?? 4, output: answer.usage?.outputTokens ?? 3 };
}

function defaultReason(answer: ScriptedAnswer): string {
  return answer.finishReason ?? ((answer.toolCalls?.length ?? 0) > 0 ? 'tool_calls' : 'stop');
}

const data = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const named = (type: string, value: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...value })}\n\n`;

// The same bytes, in shape, as the seeds' `respond`: a chunk per delta, a last chunk
// with the finish reason and usage, then [DONE].
function renderChatCompletions(answer: ScriptedAnswer, model: string): string[] {
  const id = answer.id ?? 'reply';
  const chunk = (delta: Record<string, unknown>) =>
    data({
      id,
      object: 'chat.completion.chunk',
      created: 1,
      model,
      choices: [{ index: 0, delta, finish_reason: null }],
    });
  const events = pieces(answer.reasoning).map((text) => chunk({ reasoning_content: text }));
  events.push(...pieces(answer.text).map((text) => chunk({ content: text })));
  const calls = answer.toolCalls ?? [];
  if (calls.length > 0) {
    events.push(
      chunk({
        tool_calls: calls.map((call, index) => ({
          index,
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: argumentPieces(call)[0] ?? '' },
        })),
      }),
    );
    calls.forEach((call, index) => {
      for (const piece of argumentPieces(call).slice(1)) {
        events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
      }
    });
  }
  if (events.length === 0) events.push(chunk({ content: '' }));
  const usage = usageOf(answer);
  events.push(
    data({
      id,
      object: 'chat.completion.chunk',
      created: 1,
      model,
      choices: [{ index: 0, delta: {}, finish_reason: defaultReason(answer) }],
      usage: {
        prompt_tokens: usage.input,
        completion_tokens: usage.output,
        total_tokens: usage.input + usage.output,
      },
    }),
  );
  events.push('data: [DONE]\n\n');
  return events;
}

function renderResponses(answer: ScriptedAnswer, model: string): string[] {
  const id = answer.id ?? 'resp_1';
  const events = [
    named('response.created', { response: { id, object: 'response', model, status: 'in_progress' } }),
  ];
  let outputIndex = 0;
  const reasoning = pieces(answer.reasoning);
  if (reasoning.length > 0) {
    const item = { type: 'reasoning', id: 'rs_1', summary: [] };
    events.push(named('response.output_item.added', { output_index: outputIndex, item }));
    for (const delta of reasoning) {
      events.push(
        named('response.reasoning_summary_text.delta', { item_id: 'rs_1', output_index: outputIndex, delta }),
      );
    }
    events.push(named('response.output_item.done', { output_index: outputIndex, item }));
    outputIndex += 1;
  }
  const text = pieces(answer.text);
  if (text.length > 0) {
    const item = { type: 'message', id: 'msg_1', role: 'assistant', content: [] };
    events.push(named('response.output_item.added', { output_index: outputIndex, item }));
    for (const delta of text) {
      events.push(
        named('response.output_text.delta', {
          item_id: 'msg_1',
          output_index: outputIndex,
          content_index: 0,
          delta,
        }),
      );
    }
    events.push(named('response.output_item.done', { output_index: outputIndex, item }));
    outputIndex += 1;
  }
  for (const call of answer.toolCalls ?? []) {
    const itemId = `fc_${outputIndex}`;
    const item = { type: 'function_call', id: itemId, call_id: call.id, name: call.name, arguments: '' };
    events.push(named('response.output_item.added', { output_index: outputIndex, item }));
    for (const delta of argumentPieces(call)) {
      events.push(
        named('response.function_call_arguments.delta', {
          item_id: itemId,
          output_index: outputIndex,
          delta,
        }),
      );
    }
    const whole = argumentPieces(call).join('');
    events.push(
      named('response.output_item.done', { output_index: outputIndex, item: { ...item, arguments: whole } }),
    );
    outputIndex += 1;
  }
  const usage = usageOf(answer);
  const reason = defaultReason(answer);
  const response = {
    id,
    object: 'response',
    model,
    usage: {
      input_tokens: usage.input,
      output_tokens: usage.output,
      total_tokens: usage.input + usage.output,
    },
  };
  if (reason === 'stop' || reason === 'tool_calls') {
    events.push(named('response.completed', { response: { ...response, status: 'completed' } }));
  } else {
    const incomplete = reason === 'length' ? 'max_output_tokens' : reason;
    events.push(
      named('response.incomplete', {
        response: { ...response, status: 'incomplete', incomplete_details: { reason: incomplete } },
      }),
    );
  }
  return events;
}

const anthropicReasons: Readonly<Record<string, string>> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  length: 'max_tokens',
  content_filter: 'refusal',
};

function renderAnthropic(answer: ScriptedAnswer, model: string): string[] {
  const usage = usageOf(answer);
  const events = [
    named('message_start', {
      message: {
        id: answer.id ?? 'msg_1',
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        usage: { input_tokens: usage.input, output_tokens: 1 },
      },
    }),
  ];
  let index = 0;
  const block = (start: Record<string, unknown>, deltas: readonly Record<string, unknown>[]) => {
    events.push(named('content_block_start', { index, content_block: start }));
    for (const delta of deltas) events.push(named('content_block_delta', { index, delta }));
    events.push(named('content_block_stop', { index }));
    index += 1;
  };
  const reasoning = pieces(answer.reasoning);
  if (reasoning.length > 0) {
    block(
      { type: 'thinking', thinking: '' },
      reasoning.map((thinking) => ({ type: 'thinking_delta', thinking })),
    );
  }
  const text = pieces(answer.text);
  if (text.length > 0)
    block(
      { type: 'text', text: '' },
      text.map((piece) => ({ type: 'text_delta', text: piece })),
    );
  for (const call of answer.toolCalls ?? []) {
    block(
      { type: 'tool_use', id: call.id, name: call.name, input: {} },
      argumentPieces(call).map((partial_json) => ({ type: 'input_json_delta', partial_json })),
    );
  }
  const reason = defaultReason(answer);
  events.push(
    named('message_delta', {
      delta: { stop_reason: anthropicReasons[reason] ?? reason, stop_sequence: null },
      usage: { output_tokens: usage.output },
    }),
  );
  events.push(named('message_stop', {}));
  return events;
}
