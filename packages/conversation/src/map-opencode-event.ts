import type { z } from 'zod';
import { ConversationError, type ErrorOperation } from './conversation-error.js';
import { firstIssue } from './first-issue.js';
import {
  isKnownEventType,
  KnownEventSchemas,
  type OpenCodeEvent,
  OtherEventSchema,
} from './opencode-event-schema.js';

/**
 * Parses one SSE `data` payload. A payload that is not JSON, has no `type`, or is a
 * known event with a wrong shape is a protocol error: a half-understood stream must
 * not be reported as a prompt's output.
 */
export function mapOpenCodeEvent(data: string, operation: ErrorOperation): OpenCodeEvent {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch (error) {
    throw malformed(`event data is not JSON: ${data.slice(0, 80)}`, operation, error);
  }
  const envelope = OtherEventSchema.safeParse(value);
  if (!envelope.success) throw invalid('event', envelope.error, operation);
  const type = envelope.data.name;
  if (!isKnownEventType(type)) return envelope.data;
  const known = KnownEventSchemas[type].safeParse(value);
  if (!known.success) throw invalid(type, known.error, operation);
  return known.data;
}

function invalid(what: string, error: z.ZodError, operation: ErrorOperation): ConversationError {
  const { path, message } = firstIssue(error);
  return malformed(`${what} does not parse at ${path}: ${message}`, operation, error);
}

function malformed(message: string, operation: ErrorOperation, cause?: unknown): ConversationError {
  return new ConversationError(`malformed server event: ${message}`, {
    kind: 'protocol',
    context: { operation, phase: 'stream' },
    cause,
  });
}
