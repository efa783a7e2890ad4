import {
  argumentPieces,
  dataEvent,
  finishReasonOf,
  pieces,
  type RenderedAnswer,
  type RenderRequest,
  usageOf,
} from './scripted-render-support.js';
import type { ScriptedAnswer } from './scripted-reply.js';

/**
 * A Chat Completions answer as OpenAI sends it: `role: "assistant"` in the first delta,
 * a chunk per piece, one call after another (header, then argument pieces), a last
 * choice chunk with `finish_reason`, a usage chunk with no choices when
 * `stream_options.include_usage` was asked for, then `[DONE]`. `json` is the
 * `chat.completion` a non-streaming request gets.
 */
export function renderChatCompletions(answer: ScriptedAnswer, request: RenderRequest): RenderedAnswer {
  const id = answer.id ?? 'chatcmpl-scripted';
  const base = {
    id,
    object: 'chat.completion.chunk',
    created: 1,
    model: request.model,
    system_fingerprint: null,
  };
  const deltas: Record<string, unknown>[] = [];
  for (const text of pieces(answer.reasoning)) deltas.push({ reasoning_content: text });
  for (const text of pieces(answer.text)) deltas.push({ content: text });
  for (const text of pieces(answer.refusal)) deltas.push({ refusal: text });
  const calls = answer.toolCalls ?? [];
  calls.forEach((call, index) => {
    const [first = '', ...rest] = argumentPieces(call);
    deltas.push({
      tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: first } }],
    });
    for (const piece of rest) deltas.push({ tool_calls: [{ index, function: { arguments: piece } }] });
  });
  // OpenAI opens with the role (and `content: ""` for text); folding it into the first
  // delta keeps one event per piece, which fault offsets count.
  const opening = deltas[0] ?? {};
  deltas[0] = {
    role: 'assistant',
    content: answer.text === undefined && (calls.length > 0 || answer.refusal !== undefined) ? null : '',
    refusal: null,
    ...opening,
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    dataEvent({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const events = deltas.map((delta) => chunk(delta, null));
  const reason = finishReasonOf(answer);
  events.push(chunk({}, reason));
  const tokens = usageOf(answer);
  const usage = {
    prompt_tokens: tokens.input,
    completion_tokens: tokens.output,
    total_tokens: tokens.input + tokens.output,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
  if (request.includeUsage) events.push(dataEvent({ ...base, choices: [], usage }));
  events.push('data: [DONE]\n\n');
  const text = pieces(answer.text).join('');
  const refusal = pieces(answer.refusal).join('');
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: answer.text === undefined && (calls.length > 0 || refusal !== '') ? null : text,
    refusal: refusal === '' ? null : refusal,
  };
  const reasoning = pieces(answer.reasoning).join('');
  if (reasoning !== '') message.reasoning_content = reasoning;
  if (calls.length > 0) {
    message.tool_calls = calls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: argumentPieces(call).join('') },
    }));
  }
  const json = {
    ...base,
    object: 'chat.completion',
    choices: [{ index: 0, message, logprobs: null, finish_reason: reason }],
    usage,
  };
  return { events, json };
}
