import type { ModelFinishReason, ModelStep, ModelUsage } from '@factum/agent-facts';
import { mapChatCompletionsRequest } from './map-chat-completions-request.js';
import { type ErrorContext, mapStreamError } from './map-http-error.js';
import { ModelError } from './model-error.js';
import { bearerAuth, type ProviderAdapter, type StreamDecoder } from './provider-adapter.js';
import type { SseEvent } from './sse-reader.js';
import type { StepBuilder } from './step-builder.js';
import { asCount, asObject, asString, parseWireObject, quote, type WireObject } from './wire-json.js';

const finishReasons: Readonly<Record<string, ModelFinishReason>> = {
  stop: 'stop',
  end_turn: 'stop',
  eos: 'stop',
  length: 'length',
  max_tokens: 'length',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  tool_use: 'tool_calls',
  content_filter: 'content_filter',
  error: 'error',
};

/** OpenAI Chat Completions: `POST /chat/completions`, `data: {chunk}` … `data: [DONE]`. */
export const chatCompletionsAdapter: ProviderAdapter = {
  path: 'chat/completions',
  headers: {},
  body: mapChatCompletionsRequest,
  authHeaders: bearerAuth,
  decoder: (builder, context) => new ChatCompletionsDecoder(builder, context),
};

class ChatCompletionsDecoder implements StreamDecoder {
  readonly #builder: StepBuilder;
  readonly #context: ErrorContext;
  #done = false;
  #legacyCalls = 0;

  constructor(builder: StepBuilder, context: ErrorContext) {
    this.#builder = builder;
    this.#context = context;
  }

  get complete(): boolean {
    return this.#done;
  }

  event(event: SseEvent): void {
    if (this.#done) return;
    const data = event.data.trim();
    if (data === '[DONE]') {
      this.#done = true;
      return;
    }
    if (data === '') return;
    const chunk = parseWireObject(data, 'a chunk');
    if (chunk.error !== undefined) throw mapStreamError(chunk.error, this.#context);
    this.#builder.identify({ responseId: chunk.id, model: chunk.model });
    const usage = asObject(chunk.usage);
    if (usage !== undefined) this.#builder.usage(mapUsage(usage));
    // Only choice 0 is read: other choices are other answers, never merged into this one
    // (requests asking for n > 1 are refused before they are sent).
    const choice = firstChoice(chunk.choices);
    if (choice === undefined) return;
    const delta = asObject(choice.delta) ?? asObject(choice.message);
    if (delta !== undefined) this.#delta(delta);
    const reason = choice.finish_reason;
    if (reason !== null && reason !== undefined) this.#builder.finish(mapFinishReason(reason));
  }

  finish(): ModelStep {
    if (!this.#done && this.#builder.finishReason === undefined) {
      throw new ModelError(
        'protocol',
        `the stream from ${this.#context.baseUrl} ended without a finish_reason or [DONE]: the answer is truncated`,
        { issue: 'truncated' },
      );
    }
    return this.#builder.build();
  }

  #delta(delta: WireObject): void {
    const builder = this.#builder;
    const reasoning = asString(delta.reasoning_content) ?? asString(delta.reasoning);
    if (reasoning !== undefined) builder.reasoning(reasoning);
    const content = asString(delta.content);
    if (content !== undefined) builder.text(content);
    const refusal = asString(delta.refusal);
    if (refusal !== undefined) builder.refusal(refusal);
    if (Array.isArray(delta.tool_calls)) this.#toolCalls(delta.tool_calls);
    if (delta.function_call !== undefined) this.#legacyCall(delta.function_call);
  }

  #toolCalls(calls: readonly unknown[]): void {
    const builder = this.#builder;
    for (const [position, value] of calls.entries()) {
      const call = asObject(value);
      if (call === undefined) continue;
      const fn = asObject(call.function) ?? {};
      const id = asString(call.id);
      let key: string | number = typeof call.index === 'number' ? call.index : `position:${position}`;
      // A server that reuses an index for a different call id means a new call.
      const known = builder.toolCallId(key);
      if (id !== undefined && known !== undefined && known !== id) key = `id:${id}`;
      builder.toolCall(key, { id, name: asString(fn.name), arguments: asString(fn.arguments) ?? '' });
    }
  }

  #legacyCall(value: unknown): void {
    const builder = this.#builder;
    const legacy = asObject(value);
    if (legacy !== undefined) {
      // The deprecated single `function_call` has no index or id: one call per answer.
      if (asString(legacy.name) !== undefined && builder.hasToolCall(`legacy:${this.#legacyCalls}`)) {
        this.#legacyCalls += 1;
      }
      builder.toolCall(`legacy:${this.#legacyCalls}`, {
        name: asString(legacy.name),
        arguments: asString(legacy.arguments) ?? '',
      });
    }
  }
}

function firstChoice(choices: unknown): WireObject | undefined {
  if (!Array.isArray(choices)) return undefined;
  for (const value of choices) {
    const choice = asObject(value);
    if (choice !== undefined && (choice.index ?? 0) === 0) return choice;
  }
  return undefined;
}

function mapFinishReason(reason: unknown): ModelFinishReason {
  const mapped = typeof reason === 'string' ? finishReasons[reason] : undefined;
  if (mapped === undefined) {
    throw new ModelError(
      'protocol',
      `the provider sent an unknown finish_reason ${quote(String(reason))}; expected one of ${Object.keys(finishReasons).join(', ')}`,
      { issue: 'unknown_finish_reason' },
    );
  }
  return mapped;
}

function mapUsage(usage: WireObject): ModelUsage {
  const inputTokens = asCount(usage.prompt_tokens);
  const outputTokens = asCount(usage.completion_tokens);
  const result: ModelUsage = {
    inputTokens,
    outputTokens,
    totalTokens: asCount(usage.total_tokens) || inputTokens + outputTokens,
  };
  const reasoning = asObject(usage.completion_tokens_details)?.reasoning_tokens;
  if (typeof reasoning === 'number') result.reasoningTokens = asCount(reasoning);
  const cached = asObject(usage.prompt_tokens_details)?.cached_tokens;
  if (typeof cached === 'number') result.cachedInputTokens = asCount(cached);
  return result;
}
