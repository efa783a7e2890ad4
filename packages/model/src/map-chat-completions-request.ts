import { canonicalJson, rejectionSentence } from '@factum/agent-facts';
import type { ModelMessage, ModelRequest, ModelToolOutcome } from './model-request.js';
import type { ProviderConfig } from './provider-config.js';

/**
 * The Chat Completions body for a request: `messages` in the engine's order, `tools`
 * as functions, streaming with usage in the last chunk.
 */
export function mapChatCompletionsRequest(
  provider: ProviderConfig,
  request: ModelRequest,
): Record<string, unknown> {
  const capabilities = provider.capabilities ?? {};
  const systemRole = capabilities.systemRole ?? 'system';
  const body: Record<string, unknown> = {
    model: provider.model,
    messages: request.messages.map((message) => mapMessage(message, systemRole)),
    stream: true,
  };
  if (capabilities.streamUsage !== false) body.stream_options = { include_usage: true };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
    }));
  }
  if (request.maxOutputTokens !== undefined) {
    body[capabilities.maxTokensField ?? 'max_tokens'] = request.maxOutputTokens;
  }
  return body;
}

/** One message as Chat Completions carries it. */
export function mapMessage(message: ModelMessage, systemRole: string): Record<string, unknown> {
  switch (message.role) {
    case 'system':
      return { role: systemRole, content: message.content };
    case 'user':
      return { role: 'user', content: message.content };
    case 'assistant': {
      const text = message.parts
        .map((part) => (part.kind === 'text' || part.kind === 'refusal' ? part.text : ''))
        .join('');
      const calls = message.parts.flatMap((part) =>
        part.kind === 'tool_call'
          ? [
              {
                id: part.call.id,
                type: 'function',
                function: { name: part.call.name, arguments: toolArguments(part.call) },
              },
            ]
          : [],
      );
      const mapped: Record<string, unknown> = { role: 'assistant', content: text === '' ? null : text };
      if (calls.length > 0) mapped.tool_calls = calls;
      return mapped;
    }
    case 'tool':
      return { role: 'tool', tool_call_id: message.callId, content: toolResultText(message.result) };
    default:
      return message satisfies never;
  }
}

/** The arguments as the model sent them: its own text when it was not JSON. */
export function toolArguments(call: { readonly input: unknown; readonly invalidArguments?: string }): string {
  return call.invalidArguments ?? canonicalJson(call.input ?? {});
}

/**
 * What the model reads as a tool's result: the value as JSON text, `failed: …` for an
 * error, and the rejection sentence (always "did not run: …") for a call that never ran.
 */
export function toolResultText(result: ModelToolOutcome): string {
  switch (result.kind) {
    case 'value':
      return result.value === undefined ? 'null' : canonicalJson(result.value);
    case 'text':
      return result.text;
    case 'error':
      return `failed: ${result.message}`;
    case 'rejected':
      return rejectionSentence(result.rejection);
    default:
      return result satisfies never;
  }
}
