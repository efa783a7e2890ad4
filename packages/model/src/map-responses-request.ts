import { toolArguments, toolResultText } from './map-chat-completions-request.js';
import type { ModelMessage, ModelRequest } from './model-request.js';
import type { ProviderConfig } from './provider-config.js';

/**
 * The Responses API body: the conversation as `input` items (messages, `function_call`
 * and `function_call_output`), tools as flat function definitions.
 */
export function mapResponsesRequest(
  provider: ProviderConfig,
  request: ModelRequest,
): Record<string, unknown> {
  const systemRole = provider.capabilities?.systemRole ?? 'system';
  const body: Record<string, unknown> = {
    model: provider.model,
    input: request.messages.flatMap((message) => mapItems(message, systemRole)),
    stream: true,
  };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      parameters: tool.inputSchema,
    }));
  }
  if (request.maxOutputTokens !== undefined) body.max_output_tokens = request.maxOutputTokens;
  return body;
}

/** One message as the Responses API's `input` items. */
export function mapItems(message: ModelMessage, systemRole: string): Record<string, unknown>[] {
  switch (message.role) {
    case 'system':
      return [{ role: systemRole, content: message.content }];
    case 'user':
      return [{ role: 'user', content: message.content }];
    case 'assistant': {
      const items: Record<string, unknown>[] = [];
      // Reasoning parts are not replayed: the API accepts only its own encrypted items.
      for (const part of message.parts) {
        // A refusal goes back as what the model said, so it knows it declined.
        if (part.kind === 'text' || part.kind === 'refusal') {
          const last = items.at(-1);
          if (last?.role === 'assistant') last.content = `${String(last.content)}${part.text}`;
          else items.push({ role: 'assistant', content: part.text });
        } else if (part.kind === 'tool_call') {
          items.push({
            type: 'function_call',
            call_id: part.call.id,
            name: part.call.name,
            arguments: toolArguments(part.call),
          });
        }
      }
      return items;
    }
    case 'tool':
      return [
        { type: 'function_call_output', call_id: message.callId, output: toolResultText(message.result) },
      ];
    default:
      return message satisfies never;
  }
}
