import type { ModelFinishReason, ModelStep, ModelUsage } from '@factum/agent-facts';
import { mapAnthropicRequest } from './map-anthropic-request.js';
import { type ErrorContext, mapStreamError } from './map-http-error.js';
import { ModelError } from './model-error.js';
import type { ProviderAdapter, StreamDecoder } from './provider-adapter.js';
import type { SseEvent } from './sse-reader.js';
import type { StepBuilder } from './step-builder.js';
import { asCount, asObject, asString, parseWireObject, quote, type WireObject } from './wire-json.js';

/** The API version this adapter speaks; a `headers` entry in the config overrides it. */
export const anthropicVersion = '2023-06-01';

const stopReasons: Readonly<Record<string, ModelFinishReason>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'refusal',
  pause_turn: 'other',
};

/** Anthropic Messages: `POST /messages`, content-block events ending in `message_stop`. */
export const anthropicMessagesAdapter: ProviderAdapter = {
  path: 'messages',
  body: mapAnthropicRequest,
  headers: { 'anthropic-version': anthropicVersion },
  authHeaders: (apiKey): Record<string, string> => (apiKey === undefined ? {} : { 'x-api-key': apiKey }),
  decoder: (builder, context) => new AnthropicMessagesDecoder(builder, context),
};

class AnthropicMessagesDecoder implements StreamDecoder {
  readonly #builder: StepBuilder;
  readonly #context: ErrorContext;
  readonly #blocks = new Map<number, string>();
  #usage: { input: number; cached: number | undefined; output: number } = {
    input: 0,
    cached: undefined,
    output: 0,
  };
  #done = false;

  constructor(builder: StepBuilder, context: ErrorContext) {
    this.#builder = builder;
    this.#context = context;
  }

  get complete(): boolean {
    return this.#done;
  }

  event(event: SseEvent): void {
    if (this.#done || event.data.trim() === '') return;
    const data = parseWireObject(event.data, 'an event');
    const type = asString(data.type) ?? event.event ?? '';
    switch (type) {
      case 'message_start': {
        const message = asObject(data.message) ?? {};
        this.#builder.identify({ responseId: message.id, model: message.model });
        this.#addUsage(asObject(message.usage));
        return;
      }
      case 'content_block_start':
        this.#blockStart(data);
        return;
      case 'content_block_delta':
        this.#blockDelta(data);
        return;
      case 'message_delta': {
        const reason = asObject(data.delta)?.stop_reason;
        if (reason !== null && reason !== undefined) this.#builder.finish(mapStopReason(reason));
        this.#addUsage(asObject(data.usage));
        return;
      }
      case 'message_stop':
        this.#done = true;
        return;
      case 'error':
        throw mapStreamError(asObject(data.error) ?? data, this.#context);
      default:
        // ping, content_block_stop and future event types change nothing in the step.
        return;
    }
  }

  finish(): ModelStep {
    if (!this.#done) {
      throw new ModelError(
        'protocol',
        `the stream from ${this.#context.baseUrl} ended without message_stop: the answer is truncated`,
        { issue: 'truncated' },
      );
    }
    const { input, cached, output } = this.#usage;
    const usage: ModelUsage = { inputTokens: input, outputTokens: output, totalTokens: input + output };
    if (cached !== undefined) usage.cachedInputTokens = cached;
    this.#builder.usage(usage);
    return this.#builder.build();
  }

  #blockStart(data: WireObject): void {
    const index = typeof data.index === 'number' ? data.index : 0;
    const block = asObject(data.content_block) ?? {};
    const type = asString(block.type) ?? '';
    this.#blocks.set(index, type);
    if (type === 'text') this.#builder.text(asString(block.text) ?? '');
    else if (type === 'thinking') this.#builder.reasoning(asString(block.thinking) ?? '');
    else if (type === 'tool_use') {
      // `input` is `{}` here; the real input follows as `input_json_delta` pieces.
      this.#builder.toolCall(index, { id: asString(block.id), name: asString(block.name), arguments: '' });
    }
  }

  #blockDelta(data: WireObject): void {
    const index = typeof data.index === 'number' ? data.index : 0;
    const delta = asObject(data.delta) ?? {};
    switch (delta.type) {
      case 'text_delta':
        this.#builder.text(asString(delta.text) ?? '');
        return;
      case 'thinking_delta':
        this.#builder.reasoning(asString(delta.thinking) ?? '');
        return;
      case 'input_json_delta':
        if (this.#blocks.get(index) !== 'tool_use') return;
        this.#builder.toolCall(index, { arguments: asString(delta.partial_json) ?? '' });
        return;
      default:
        return;
    }
  }

  #addUsage(usage: WireObject | undefined): void {
    if (usage === undefined) return;
    const cacheRead = usage.cache_read_input_tokens;
    // Anthropic counts cached and cache-writing input apart from `input_tokens`.
    const input =
      asCount(usage.input_tokens) + asCount(cacheRead) + asCount(usage.cache_creation_input_tokens);
    if (input > 0) this.#usage.input = input;
    if (typeof cacheRead === 'number') this.#usage.cached = asCount(cacheRead);
    if (usage.output_tokens !== undefined) this.#usage.output = asCount(usage.output_tokens);
  }
}

function mapStopReason(reason: unknown): ModelFinishReason {
  const mapped = typeof reason === 'string' ? stopReasons[reason] : undefined;
  if (mapped === undefined) {
    throw new ModelError('protocol', `the provider sent an unknown stop_reason ${quote(String(reason))}`, {
      issue: 'unknown_finish_reason',
    });
  }
  return mapped;
}
