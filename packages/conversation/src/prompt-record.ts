import type { PromptOutcome } from './prompt-outcome.js';

/** Phase of a prompt: admitted (sent, outcome not recorded) or terminal (outcome recorded). */
export type PromptPhase =
  | { readonly phase: 'admitted' }
  | { readonly phase: 'terminal'; readonly outcome: PromptOutcome };

/** Whether an abort has durably asked for this prompt to be cancelled. */
export type PromptCancellation = { readonly state: 'not_requested' | 'requested' };

/**
 * Who waits for the terminal: `waiting` (a live observer), `lost` (the observer went
 * away, or the observation ended without an outcome), `delivering` (a recorded
 * terminal is being handed to its observer).
 */
export type PromptWaiter = 'waiting' | 'lost' | 'delivering';

/** The durable state of the one prompt a conversation may have in flight (snake_case on the wire). */
export type PromptRecord = {
  readonly message_id: string;
  readonly request_part_id: string;
  readonly phase: PromptPhase;
  readonly cancellation: PromptCancellation;
  readonly waiter: PromptWaiter;
};

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

/** Thrown by `parsePromptRecord`; names the first field that does not fit. */
export class PromptRecordShapeError extends Error {
  constructor(readonly path: string) {
    super(`stored prompt record does not parse at ${path}`);
  }
}

/** Parses a stored JSON value into a `PromptRecord`, or throws `PromptRecordShapeError`. */
export function parsePromptRecord(value: unknown): PromptRecord {
  const record = object(value, '$');
  const phase = object(record.phase, '$.phase');
  const cancellation = object(record.cancellation, '$.cancellation');
  return {
    message_id: text(record.message_id, '$.message_id'),
    request_part_id: text(record.request_part_id, '$.request_part_id'),
    phase:
      phase.phase === 'admitted'
        ? { phase: 'admitted' }
        : phase.phase === 'terminal'
          ? { phase: 'terminal', outcome: parseOutcome(phase.outcome) }
          : fail('$.phase.phase'),
    cancellation: {
      state: oneOf(cancellation.state, ['not_requested', 'requested'] as const, '$.cancellation.state'),
    },
    waiter: oneOf(record.waiter, ['waiting', 'lost', 'delivering'] as const, '$.waiter'),
  };
}

function parseOutcome(value: unknown): PromptOutcome {
  const outcome = object(value, '$.phase.outcome');
  const assistant = (path: string) =>
    outcome.assistantMessageId === null ? null : text(outcome.assistantMessageId, path);
  switch (outcome.outcome) {
    case 'success':
      return {
        outcome: 'success',
        assistantMessageId: text(outcome.assistantMessageId, '$.phase.outcome.assistantMessageId'),
        text: typeof outcome.text === 'string' ? outcome.text : fail('$.phase.outcome.text'),
      };
    case 'cancelled':
      return { outcome: 'cancelled', assistantMessageId: assistant('$.phase.outcome.assistantMessageId') };
    case 'failed':
      return {
        outcome: 'failed',
        assistantMessageId: assistant('$.phase.outcome.assistantMessageId'),
        errorName: text(outcome.errorName, '$.phase.outcome.errorName'),
        errorMessage: typeof outcome.errorMessage === 'string' ? outcome.errorMessage : '',
      };
    default:
      return fail('$.phase.outcome.outcome');
  }
}

function object(value: unknown, path: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(path);
  return value as Record<string, unknown>;
}

function text(value: unknown, path: string): string {
  return typeof value === 'string' && value.length > 0 ? value : fail(path);
}

function oneOf<const T extends string>(value: unknown, allowed: readonly T[], path: string): T {
  return allowed.includes(value as T) ? (value as T) : fail(path);
}

function fail(path: string): never {
  throw new PromptRecordShapeError(path);
}
