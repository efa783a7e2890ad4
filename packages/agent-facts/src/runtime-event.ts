import { z } from 'zod';
import { newEventId } from './event-id.js';
import { type Fact, FactSchema } from './fact-schema.js';
import { type Invocation, InvocationSchema } from './invocation-schema.js';
import { parseWith } from './parse.js';

/**
 * One fact as the log records it: who it belongs to, when, and an id of its own (made
 * by `create`: a time-ordered UUID v7; any string up to 256 characters parses).
 */
export const RuntimeEventSchema = z.strictObject({
  id: z.string().min(1).max(256),
  invocation: InvocationSchema,
  timestamp: z.iso.datetime(),
  fact: FactSchema,
});
export type RuntimeEvent = z.infer<typeof RuntimeEventSchema>;

/** Where new events take their ids and times from; tests pass fixed ones. */
export type EventOrigin = { readonly id?: () => string; readonly now?: () => Date };

/** Builders and parsers for runtime events. */
export const RuntimeEvent = {
  /**
   * A new event for `fact`, parsed on the way in so a malformed fact fails here with
   * the path of the bad field.
   *
   * @example
   * const event = RuntimeEvent.create(invocation, { kind: 'invocation_ended', outcome: { kind: 'completed' } });
   */
  create(invocation: Invocation, fact: Fact, origin: EventOrigin = {}): RuntimeEvent {
    const now = origin.now?.() ?? new Date();
    return parseWith(RuntimeEventSchema, 'event', {
      id: origin.id?.() ?? newEventId(now.getTime()),
      invocation,
      timestamp: now.toISOString(),
      fact,
    });
  },
  /** Parses an untrusted value into an event, or throws `FactParseError`. */
  parse(value: unknown): RuntimeEvent {
    return parseWith(RuntimeEventSchema, 'event', value);
  },
} as const;

/** Parses an untrusted value into a fact, or throws `FactParseError`. */
export function parseFact(value: unknown): Fact {
  return parseWith(FactSchema, 'fact', value);
}
