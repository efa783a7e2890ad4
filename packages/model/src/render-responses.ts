import {
  argumentPieces,
  finishReasonOf,
  namedEvent,
  pieces,
  type RenderedAnswer,
  type RenderRequest,
  usageOf,
} from './scripted-render-support.js';
import type { ScriptedAnswer } from './scripted-reply.js';

type Item = Record<string, unknown>;

/**
 * A Responses answer event for event as OpenAI streams it: `response.created` and
 * `response.in_progress`, then each output item (`output_item.added`, its
 * `content_part` / summary part events, deltas, `….done` events with the whole text,
 * `output_item.done`), then `response.completed` (or `response.incomplete`) carrying
 * the whole `output`; every event has its `sequence_number`. `json` is the response
 * object a non-streaming request gets.
 */
export function renderResponses(answer: ScriptedAnswer, request: RenderRequest): RenderedAnswer {
  const id = answer.id ?? 'resp_scripted';
  const events: string[] = [];
  let sequence = 0;
  const emit = (type: string, body: Record<string, unknown>) => {
    events.push(namedEvent(type, { ...body, sequence_number: sequence }));
    sequence += 1;
  };
  const shell = {
    id,
    object: 'response',
    created_at: 1,
    model: request.model,
    error: null,
    incomplete_details: null,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
  };
  emit('response.created', { response: { ...shell, status: 'in_progress', output: [], usage: null } });
  emit('response.in_progress', { response: { ...shell, status: 'in_progress', output: [], usage: null } });
  const output: Item[] = [];
  const reasoning = pieces(answer.reasoning);
  if (reasoning.length > 0) {
    const output_index = output.length;
    const item_id = `rs_${output_index}`;
    const text = reasoning.join('');
    const at = { item_id, output_index, summary_index: 0 };
    emit('response.output_item.added', {
      output_index,
      item: { id: item_id, type: 'reasoning', summary: [] },
    });
    emit('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
    for (const delta of reasoning) emit('response.reasoning_summary_text.delta', { ...at, delta });
    emit('response.reasoning_summary_text.done', { ...at, text });
    emit('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text } });
    const item = { id: item_id, type: 'reasoning', summary: [{ type: 'summary_text', text }] };
    emit('response.output_item.done', { output_index, item });
    output.push(item);
  }
  const text = pieces(answer.text);
  const refusal = pieces(answer.refusal);
  if (text.length > 0 || refusal.length > 0) {
    const output_index = output.length;
    const item_id = `msg_${output_index}`;
    const message = { id: item_id, type: 'message', role: 'assistant' };
    const content: Item[] = [];
    emit('response.output_item.added', {
      output_index,
      item: { ...message, status: 'in_progress', content: [] },
    });
    const part = (kind: 'output_text' | 'refusal', deltas: readonly string[]) => {
      const at = { item_id, output_index, content_index: content.length };
      const whole = deltas.join('');
      const field = kind === 'output_text' ? 'text' : 'refusal';
      const empty =
        kind === 'output_text'
          ? { type: kind, annotations: [], logprobs: [], text: '' }
          : { type: kind, refusal: '' };
      const done = { ...empty, [field]: whole };
      emit('response.content_part.added', { ...at, part: empty });
      const deltaType = kind === 'output_text' ? 'response.output_text.delta' : 'response.refusal.delta';
      for (const delta of deltas)
        emit(deltaType, kind === 'output_text' ? { ...at, delta, logprobs: [] } : { ...at, delta });
      if (kind === 'output_text') emit('response.output_text.done', { ...at, text: whole, logprobs: [] });
      else emit('response.refusal.done', { ...at, refusal: whole });
      emit('response.content_part.done', { ...at, part: done });
      content.push(done);
    };
    if (text.length > 0) part('output_text', text);
    if (refusal.length > 0) part('refusal', refusal);
    const item = { ...message, status: 'completed', content };
    emit('response.output_item.done', { output_index, item });
    output.push(item);
  }
  for (const call of answer.toolCalls ?? []) {
    const output_index = output.length;
    const item_id = `fc_${output_index}`;
    const whole = argumentPieces(call).join('');
    const item = { id: item_id, type: 'function_call', call_id: call.id, name: call.name };
    emit('response.output_item.added', {
      output_index,
      item: { ...item, status: 'in_progress', arguments: '' },
    });
    for (const delta of argumentPieces(call)) {
      emit('response.function_call_arguments.delta', { item_id, output_index, delta });
    }
    emit('response.function_call_arguments.done', { item_id, output_index, arguments: whole });
    const done = { ...item, status: 'completed', arguments: whole };
    emit('response.output_item.done', { output_index, item: done });
    output.push(done);
  }
  const tokens = usageOf(answer);
  const usage = {
    input_tokens: tokens.input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: tokens.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: tokens.input + tokens.output,
  };
  const reason = finishReasonOf(answer);
  let json: Record<string, unknown>;
  if (reason === 'stop' || reason === 'tool_calls') {
    json = { ...shell, status: 'completed', output, usage };
    emit('response.completed', { response: json });
  } else {
    const incomplete = reason === 'length' ? 'max_output_tokens' : reason;
    json = { ...shell, status: 'incomplete', incomplete_details: { reason: incomplete }, output, usage };
    emit('response.incomplete', { response: json });
  }
  return { events, json };
}
