import { z } from 'zod';

// Ids are never empty: an empty one could not name the message the outcome belongs to.
const messageId = z.string().min(1);

/**
 * How a prompt ended on the agent server, as recorded and delivered:
 * `success` (the assistant answered), `cancelled` (aborted natively) or `failed`
 * (the server reported an error for the assistant message).
 */
export const PromptOutcomeSchema = z.discriminatedUnion('outcome', [
  z.object({ outcome: z.literal('success'), assistantMessageId: messageId, text: z.string() }).readonly(),
  z.object({ outcome: z.literal('cancelled'), assistantMessageId: messageId.nullable() }).readonly(),
  z
    .object({
      outcome: z.literal('failed'),
      assistantMessageId: messageId.nullable(),
      errorName: z.string().min(1),
      // The server's error text is informational only; a missing one must not lose the outcome.
      errorMessage: z.string().catch(''),
    })
    .readonly(),
]);

/** How a prompt ended on the agent server; see `PromptOutcomeSchema`. */
export type PromptOutcome = z.infer<typeof PromptOutcomeSchema>;
