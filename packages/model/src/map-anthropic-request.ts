import { toolResultText } from './map-chat-completions-request.js';
import type { ModelMessage, ModelRequest } from './model-request.js';
import type { ProviderConfig } from './provider-config.js';

/** Anthropic requires `max_tokens`; this is used when the request sets no limit. */
export const defaultAnthropicMaxTokens = 4096;

type Block = Record<string, unknown>;
type AnthropicMessage = { role: 'user' | 'assistant'; content: Block[] };

/**
 * The Messages API body: system text lifted into `system`, tool results as
 * `tool_result` blocks of a user message, and consecutive messages of one role merged
 * (the API wants the roles to alternate).
 */
export function mapAnthropicRequest(
  provider: ProviderConfig,
  request: ModelRequest,
): Record<string, unknown> {
  const system: string[] = [];
  const messages: AnthropicMessage[] = [];
  const push = (role: AnthropicMessage['role'], blocks: Block[]) => {
    if (blocks.length === 0) return;
    const last = messages.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const message of request.messages) {
    if (message.role === 'system') system.push(message.content);
    else push(message.role === 'assistant' ? 'assistant' : 'user', blocksOf(message));
  }
  const body: Record<string, unknown> = {
    model: provider.model,
    max_tokens: request.maxOutputTokens ?? defaultAnthropicMaxTokens,
    messages,
    stream: true,
  };
  if (system.length > 0) body.system = system.join('\n\n');
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.inputSchema,
    }));
  }
  return body;
}

/** The content blocks of one message that is not system text. */
export function blocksOf(message: Exclude<ModelMessage, { role: 'system' }>): Block[] {
  switch (message.role) {
    case 'user':
      return [{ type: 'text', text: message.content }];
    case 'assistant':
      // Thinking blocks need the provider's signature to be replayed, which a part lacks.
      return message.parts.flatMap((part): Block[] => {
        if (part.kind === 'text' || part.kind === 'refusal')
          return part.text === '' ? [] : [{ type: 'text', text: part.text }];
        if (part.kind === 'tool_call') {
          const input = part.call.input;
          const object = typeof input === 'object' && input !== null && !Array.isArray(input) ? input : {};
          return [{ type: 'tool_use', id: part.call.id, name: part.call.name, input: object }];
        }
        return [];
      });
    case 'tool': {
      const block: Block = {
        type: 'tool_result',
        tool_use_id: message.callId,
        content: toolResultText(message.result),
      };
      if (message.result.kind !== 'value') block.is_error = true;
      return [block];
    }
    default:
      return message satisfies never;
  }
}
