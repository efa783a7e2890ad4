import type { ModelFinishReason, ModelStep } from '@factum/agent-facts';
import { type ErrorContext, mapStreamError } from './map-http-error.js';
import { mapResponsesRequest } from './map-responses-request.js';
import { ModelError } from './model-error.js';
import { bearerAuth, type ProviderAdapter, type StreamDecoder } from './provider-adapter.js';
import type { SseEvent } from './sse-reader.js';
import type { StepBuilder } from './step-builder.js';
import { asCount, asObject, asString, parseWireObject, quote, type WireObject } from './wire-json.js';

const incompleteReasons: Readonly<Record<string, ModelFinishReason>> = {
  max_output_tokens: 'length',
  content_filter: 'content_filter',
};

/** OpenAI Responses: `POST /responses`, typed events ending in `response.completed`. */
export const responsesAdapter: ProviderAdapter = {
  path: 'responses',
  headers: {},
  body: mapResponsesRequest,
  authHeaders: bearerAuth,
  decoder: (builder, context) => new ResponsesDecoder(builder, context),
};

class ResponsesDecoder implements StreamDecoder {
  readonly #builder: StepBuilder;
  readonly #context: ErrorContext;
  #done = false;

  constructor(builder: StepBuilder, context: ErrorContext) {
    this.#builder = builder;
    this.#context = context;
  }

  get complete(): boolean {
    return this.#done;
  }

  event(event: SseEvent): void {
    if (this.#done || event.data.trim() === '' || event.data.trim() === '[DONE]') return;
    const data = parseWireObject(event.data, 'an event');
    const type = asString(data.type) ?? event.event ?? '';
    const builder = this.#builder;
    switch (type) {
      case 'response.created':
      case 'response.in_progress':
        this.#identify(data);
        return;
      case 'response.output_item.added':
      case 'response.output_item.done':
        this.#item(data, type === 'response.output_item.done');
        return;
      case 'response.content_part.added':
        // Each output message (and each part of one) is its own part of the step.
        builder.boundary();
        return;
      case 'response.output_text.delta':
        builder.text(asString(data.delta) ?? '');
        return;
      case 'response.refusal.delta':
        builder.refusal(asString(data.delta) ?? '');
        return;
      case 'response.reasoning_text.delta':
      case 'response.reasoning_summary_text.delta':
        builder.reasoning(asString(data.delta) ?? '');
        return;
      case 'response.function_call_arguments.delta':
        builder.toolCall(itemKey(data), { arguments: asString(data.delta) ?? '' });
        return;
      case 'response.function_call_arguments.done':
        this.#finalArguments(itemKey(data), asString(data.arguments));
        return;
      case 'response.completed':
      case 'response.incomplete':
        this.#end(data, type);
        return;
      case 'response.failed':
        throw mapStreamError(asObject(data.response)?.error ?? data, this.#context);
      case 'error':
        throw mapStreamError(asObject(data.error) ?? data, this.#context);
      default:
        // Content-part bookkeeping and future event types carry nothing the step needs.
        return;
    }
  }

  finish(): ModelStep {
    if (!this.#done) {
      throw new ModelError(
        'protocol',
        `the stream from ${this.#context.baseUrl} ended without response.completed: the answer is truncated`,
        { issue: 'truncated' },
      );
    }
    return this.#builder.build();
  }

  #identify(data: WireObject): void {
    const response = asObject(data.response) ?? {};
    this.#builder.identify({ responseId: response.id, model: response.model });
  }

  #item(data: WireObject, done: boolean): void {
    const item = asObject(data.item) ?? {};
    if (item.type === 'message' && !done) this.#builder.boundary();
    if (item.type !== 'function_call') return;
    const key = itemKey(data);
    if (!this.#builder.hasToolCall(key)) {
      this.#builder.toolCall(key, {
        id: asString(item.call_id) ?? asString(item.id),
        name: asString(item.name),
        arguments: done ? (asString(item.arguments) ?? '') : '',
      });
      return;
    }
    if (done) this.#finalArguments(key, asString(item.arguments));
  }

  // Some servers send the arguments only whole, in the `done` events.
  #finalArguments(key: number, text: string | undefined): void {
    if (text === undefined || this.#builder.toolCallArguments(key) !== '') return;
    this.#builder.toolCall(key, { arguments: text });
  }

  #end(data: WireObject, type: string): void {
    this.#identify(data);
    const response = asObject(data.response) ?? {};
    const usage = asObject(response.usage);
    if (usage !== undefined) {
      const inputTokens = asCount(usage.input_tokens);
      const outputTokens = asCount(usage.output_tokens);
      this.#builder.usage({
        inputTokens,
        outputTokens,
        totalTokens: asCount(usage.total_tokens) || inputTokens + outputTokens,
        reasoningTokens: asCount(asObject(usage.output_tokens_details)?.reasoning_tokens),
        cachedInputTokens: asCount(asObject(usage.input_tokens_details)?.cached_tokens),
      });
    }
    if (type === 'response.completed') {
      this.#builder.finish(this.#builder.toolCallCount > 0 ? 'tool_calls' : 'stop');
    } else {
      const reason = asString(asObject(response.incomplete_details)?.reason) ?? '';
      const mapped = incompleteReasons[reason];
      if (mapped === undefined) {
        throw new ModelError('protocol', `the provider sent an unknown incomplete reason ${quote(reason)}`, {
          issue: 'unknown_finish_reason',
        });
      }
      this.#builder.finish(mapped);
    }
    this.#done = true;
  }
}

function itemKey(data: WireObject): number {
  return typeof data.output_index === 'number' ? data.output_index : 0;
}
