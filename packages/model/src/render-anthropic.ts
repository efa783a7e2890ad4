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

const stopReasons: Readonly<Record<string, string>> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  length: 'max_tokens',
  content_filter: 'refusal',
  refusal: 'refusal',
};

type Block = Record<string, unknown>;

/**
 * An Anthropic Messages answer as Anthropic streams it: `message_start`, a `ping`, each
 * content block (`content_block_start`, deltas, a `signature_delta` closing thinking,
 * `content_block_stop`), `message_delta` with the stop reason and output tokens, then
 * `message_stop`. A scripted refusal is text with stop reason `refusal`. `json` is the
 * message a non-streaming request gets.
 */
export function renderAnthropic(answer: ScriptedAnswer, request: RenderRequest): RenderedAnswer {
  const tokens = usageOf(answer);
  const usage = { input_tokens: tokens.input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const message = {
    id: answer.id ?? 'msg_scripted',
    type: 'message',
    role: 'assistant',
    model: request.model,
  };
  const events = [
    namedEvent('message_start', {
      message: {
        ...message,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    }),
    namedEvent('ping', {}),
  ];
  const content: Block[] = [];
  const block = (start: Block, deltas: readonly Block[], whole: Block) => {
    const index = content.length;
    events.push(namedEvent('content_block_start', { index, content_block: start }));
    for (const delta of deltas) events.push(namedEvent('content_block_delta', { index, delta }));
    events.push(namedEvent('content_block_stop', { index }));
    content.push(whole);
  };
  const reasoning = pieces(answer.reasoning);
  if (reasoning.length > 0) {
    const signature = 'scripted-signature';
    block(
      { type: 'thinking', thinking: '', signature: '' },
      [
        ...reasoning.map((thinking) => ({ type: 'thinking_delta', thinking })),
        { type: 'signature_delta', signature },
      ],
      { type: 'thinking', thinking: reasoning.join(''), signature },
    );
  }
  const text = [...pieces(answer.text), ...pieces(answer.refusal)];
  if (text.length > 0) {
    block(
      { type: 'text', text: '' },
      text.map((piece) => ({ type: 'text_delta', text: piece })),
      { type: 'text', text: text.join('') },
    );
  }
  for (const call of answer.toolCalls ?? []) {
    const json = argumentPieces(call);
    let input: unknown = {};
    try {
      input = JSON.parse(json.join('') || '{}');
    } catch {
      // A scripted call with broken arguments: the stream carries them as they are.
    }
    block(
      { type: 'tool_use', id: call.id, name: call.name, input: {} },
      json.map((partial_json) => ({ type: 'input_json_delta', partial_json })),
      { type: 'tool_use', id: call.id, name: call.name, input },
    );
  }
  const reason =
    answer.refusal !== undefined && answer.finishReason === undefined ? 'refusal' : finishReasonOf(answer);
  const stopReason = stopReasons[reason] ?? reason;
  events.push(
    namedEvent('message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: tokens.output },
    }),
  );
  events.push(namedEvent('message_stop', {}));
  const json = {
    ...message,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { ...usage, output_tokens: tokens.output },
  };
  return { events, json };
}
