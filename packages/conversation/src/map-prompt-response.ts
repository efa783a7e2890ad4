import type { z } from 'zod';
import { ConversationError } from './conversation-error.js';
import { firstIssue } from './first-issue.js';
import { PromptAnswerSchema } from './opencode-answer-schema.js';
import { type PromptOutcome, PromptOutcomeSchema } from './prompt-outcome.js';

/**
 * The terminal outcome in a `POST /session/:id/message` answer
 * (`{ info: AssistantMessage, parts: Part[] }`). An aborted assistant message is
 * `cancelled`, any other recorded error `failed`, otherwise `success` with the text
 * parts joined. A body of another shape is a protocol error.
 */
export function mapPromptResponse(body: unknown): PromptOutcome {
  const parsed = PromptAnswerSchema.safeParse(body);
  if (!parsed.success) {
    const { path, message } = firstIssue(parsed.error);
    throw new ConversationError(
      `the prompt answer is not an assistant message (\`info\`) with \`parts\`: at ${path}: ${message}`,
      { kind: 'protocol', context: { operation: 'prompt', phase: 'response' }, cause: parsed.error },
    );
  }
  // The outcome is parsed by the schema it will be stored under, so an answer the store
  // could not read back (an empty id, say) is refused here rather than recorded.
  const outcome = PromptOutcomeSchema.safeParse(outcomeOf(parsed.data));
  if (!outcome.success) {
    const { path, message } = firstIssue(outcome.error);
    throw new ConversationError(`the prompt answer's outcome is malformed: at ${path}: ${message}`, {
      kind: 'protocol',
      context: { operation: 'prompt', phase: 'response' },
      cause: outcome.error,
    });
  }
  return outcome.data;
}

function outcomeOf({ info, parts }: z.infer<typeof PromptAnswerSchema>): unknown {
  if (info.error) {
    const { name, data } = info.error;
    if (name === 'MessageAbortedError') return { outcome: 'cancelled', assistantMessageId: info.id };
    return { outcome: 'failed', assistantMessageId: info.id, errorName: name, errorMessage: data.message };
  }
  return { outcome: 'success', assistantMessageId: info.id, text: parts.join('') };
}
