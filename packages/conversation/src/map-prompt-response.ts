import { ConversationError } from './conversation-error.js';
import type { PromptOutcome } from './prompt-outcome.js';

/**
 * The terminal outcome in a `POST /session/:id/message` answer
 * (`{ info: AssistantMessage, parts: Part[] }`). An aborted assistant message is
 * `cancelled`, any other recorded error `failed`, otherwise `success` with the text
 * parts joined. A body of another shape is a protocol error.
 */
export function mapPromptResponse(body: unknown): PromptOutcome {
  const info = (body as { info?: unknown } | null)?.info as Record<string, unknown> | undefined;
  const parts = (body as { parts?: unknown } | null)?.parts;
  if (typeof info !== 'object' || info === null || typeof info.id !== 'string' || !Array.isArray(parts)) {
    throw new ConversationError('the prompt answer has no assistant message (`info`) and `parts`', {
      kind: 'protocol',
      context: { operation: 'prompt', phase: 'response' },
    });
  }
  const error = info.error as { name?: unknown; data?: { message?: unknown } } | undefined;
  if (error !== undefined && error !== null) {
    const name = typeof error.name === 'string' ? error.name : 'UnknownError';
    if (name === 'MessageAbortedError') return { outcome: 'cancelled', assistantMessageId: info.id };
    const message = typeof error.data?.message === 'string' ? error.data.message : '';
    return { outcome: 'failed', assistantMessageId: info.id, errorName: name, errorMessage: message };
  }
  const text = parts
    .filter(
      (part): part is { type: 'text'; text: string } =>
        part?.type === 'text' && typeof part.text === 'string',
    )
    .map((part) => part.text)
    .join('');
  return { outcome: 'success', assistantMessageId: info.id, text };
}
