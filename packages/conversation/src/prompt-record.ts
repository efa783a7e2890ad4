import { z } from 'zod';
import { firstIssue } from './first-issue.js';
import { PromptOutcomeSchema } from './prompt-outcome.js';

/** Phase of a prompt: admitted (sent, outcome not recorded) or terminal (outcome recorded). */
export const PromptPhaseSchema = z.discriminatedUnion('phase', [
  z.object({ phase: z.literal('admitted') }).readonly(),
  z.object({ phase: z.literal('terminal'), outcome: PromptOutcomeSchema }).readonly(),
]);
/** Phase of a prompt; see `PromptPhaseSchema`. */
export type PromptPhase = z.infer<typeof PromptPhaseSchema>;

/** Whether an abort has durably asked for this prompt to be cancelled. */
export const PromptCancellationSchema = z
  .object({ state: z.enum(['not_requested', 'requested']) })
  .readonly();
/** Whether an abort has durably asked for this prompt to be cancelled. */
export type PromptCancellation = z.infer<typeof PromptCancellationSchema>;

/**
 * Who waits for the terminal: `waiting` (a live observer), `lost` (the observer went
 * away, or the observation ended without an outcome), `delivering` (a recorded
 * terminal is being handed to its observer).
 */
export const PromptWaiterSchema = z.enum(['waiting', 'lost', 'delivering']);
/** Who waits for the terminal; see `PromptWaiterSchema`. */
export type PromptWaiter = z.infer<typeof PromptWaiterSchema>;

/** The durable state of the one prompt a conversation may have in flight (snake_case on the wire). */
export const PromptRecordSchema = z
  .object({
    message_id: z.string().min(1),
    request_part_id: z.string().min(1),
    phase: PromptPhaseSchema,
    cancellation: PromptCancellationSchema,
    waiter: PromptWaiterSchema,
  })
  .readonly();
/** The durable state of the one prompt a conversation may have in flight; see `PromptRecordSchema`. */
export type PromptRecord = z.infer<typeof PromptRecordSchema>;

/** The store key of a conversation's prompt record. */
export function promptKey(conversationId: string): string {
  return `conversation/${conversationId}/prompt`;
}

/** A fresh record for a prompt about to be sent. */
export function admittedRecord(messageId: string, requestPartId: string): PromptRecord {
  return {
    message_id: messageId,
    request_part_id: requestPartId,
    phase: { phase: 'admitted' },
    cancellation: { state: 'not_requested' },
    waiter: 'waiting',
  };
}

/** Thrown by `parsePromptRecord`; names the first field that does not fit (`$.phase.outcome.text`). */
export class PromptRecordShapeError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
    options?: { readonly cause?: unknown },
  ) {
    super(`stored prompt record does not parse at ${path}: ${reason}`, options);
  }
}

/** Parses a stored JSON value into a `PromptRecord`, or throws `PromptRecordShapeError`. */
export function parsePromptRecord(value: unknown): PromptRecord {
  const parsed = PromptRecordSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const { path, message } = firstIssue(parsed.error);
  throw new PromptRecordShapeError(path, message, { cause: parsed.error });
}
