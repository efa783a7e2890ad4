import { z } from 'zod';
import { newEventId } from './event-id.js';
import { factObject } from './fact-object.js';
import { type Fact, FactSchema } from './fact-schema.js';
import { type Invocation, InvocationSchema } from './invocation-schema.js';
import { isJsonValue } from './json-value.js';
import { COMPILE_AFTER, checked, parseWith } from './parse.js';

/**
 * One fact as the log records it: who it belongs to, when, and an id of its own (made
 * by `create`: a time-ordered UUID v7; any string up to 256 characters parses).
 */
export const RuntimeEventSchema = factObject({
  id: z.string().min(1).max(256),
  invocation: InvocationSchema,
  timestamp: z.iso.datetime(),
  fact: FactSchema,
});
export type RuntimeEvent = z.infer<typeof RuntimeEventSchema>;

/**
 * The event schema narrowed to each fact kind: an event whose fact has that kind parses
 * to what `RuntimeEventSchema` makes of it, and nothing it refuses parses.
 */
const eventOfKind = new Map<unknown, z.ZodType<RuntimeEvent>>(
  FactSchema.options.map((option) => [option.shape.kind.value, RuntimeEventSchema.extend({ fact: option })]),
);
/** Each kind's schema, compiled (`z.compile`) when first needed past the compile point. */
const compiledOfKind = new Map<unknown, z.ZodType<RuntimeEvent>>();
let eventParses = 0;

function factKindOf(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  const fact = (value as { fact?: unknown }).fact;
  return typeof fact === 'object' && fact !== null ? (fact as { kind?: unknown }).kind : undefined;
}

/**
 * Parses an event as `RuntimeEventSchema` does. Once a process has parsed
 * `COMPILE_AFTER` events it parses each with a compiled validator of its fact's kind
 * (see `parseWith` for why the point): one generated function for the whole schema
 * holds a branch per kind, of which a parse runs one, and V8 left it unoptimized past
 * 14,000 parses in a running engine (the work it waits for before optimizing a function
 * grows with the function's size); a kind's own validator is optimized after a few
 * hundred of its parses. A value the compiled check refuses, or one of no known kind,
 * is parsed by the runtime parser of the whole schema, whose issues the error reports.
 */
function parseEvent(value: unknown): RuntimeEvent {
  if (eventParses < COMPILE_AFTER) {
    eventParses += 1;
    return checked(RuntimeEventSchema.safeParse(value), 'event');
  }
  const kind = factKindOf(value);
  let compiled = compiledOfKind.get(kind);
  if (compiled === undefined) {
    const schema = eventOfKind.get(kind);
    if (schema !== undefined) {
      compiled = z.compile(schema);
      compiledOfKind.set(kind, compiled);
    }
  }
  const parsed = compiled?.safeParse(value);
  if (parsed?.success) return parsed.data;
  return checked(RuntimeEventSchema.safeParse(value), 'event');
}

/** Where new events take their ids and times from; tests pass fixed ones. */
export type EventOrigin = {
  readonly id?: () => string;
  readonly now?: () => Date;
  /**
   * When `create` parses the fact: `'now'` (the default), or `'later'` for a caller that
   * checks every event it takes itself — a replay compares each with a recorded fact the
   * log parsed, and parses only one that differs. Such an event is neither frozen nor
   * vouched for, so a log given one parses it in full (`ensure`) before storing it.
   */
  readonly parse?: 'now' | 'later';
};

/**
 * Events `create` made, each with the JSON values (tool inputs) it shares with its
 * caller: the rest of such an event was built by its parse and frozen, so it still
 * parses; only what the caller may still change needs a second look.
 */
const created = new WeakMap<object, readonly object[]>();

/**
 * Freezes every object and array the parse built (those not identical to the input at
 * the same place) and collects the ones it passed through, which belong to the caller.
 */
function freezeParsed(output: unknown, input: unknown, shared: object[]): object[] {
  if (typeof output !== 'object' || output === null) return shared;
  if (output === input) {
    shared.push(output);
    return shared;
  }
  const source = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
  // By key: entries() would allocate a pair for every member of every object of every fact.
  const record = output as Record<string, unknown>;
  for (const key of Object.keys(record)) freezeParsed(record[key], source[key], shared);
  Object.freeze(output);
  return shared;
}

/** Builders and parsers for runtime events. */
export const RuntimeEvent = {
  /**
   * A new event for `fact`, parsed on the way in so a malformed fact fails here with
   * the path of the bad field — unless `origin.parse` leaves that to the caller.
   *
   * @example
   * const event = RuntimeEvent.create(invocation, { kind: 'invocation_ended', outcome: { kind: 'completed' } });
   */
  create(invocation: Invocation, fact: Fact, origin: EventOrigin = {}): RuntimeEvent {
    const now = origin.now?.() ?? new Date();
    const input = {
      id: origin.id?.() ?? newEventId(now.getTime()),
      invocation,
      timestamp: now.toISOString(),
      fact,
    };
    if (origin.parse === 'later') return input;
    const event = parseEvent(input);
    created.set(event, freezeParsed(event, input, []));
    return event;
  },
  /** Parses an untrusted value into an event, or throws `FactParseError`. */
  parse(value: unknown): RuntimeEvent {
    return parseEvent(value);
  },
  /**
   * The same verdict as `parse`, without parsing twice what `create` already parsed:
   * an event `create` made is frozen (its envelope: ids, kinds, operation ids, origins,
   * outcomes), and only the JSON values it shares with its caller — which the caller may
   * still change — are checked again. Anything else, a look-alike object included, is
   * parsed in full. Returns the value itself when it is such an event.
   */
  ensure(value: unknown): RuntimeEvent {
    if (typeof value === 'object' && value !== null) {
      const shared = created.get(value);
      if (shared?.every((json) => isJsonValue(json))) return value as RuntimeEvent;
    }
    return RuntimeEvent.parse(value);
  },
} as const;

/** Parses an untrusted value into a fact, or throws `FactParseError`. */
export function parseFact(value: unknown): Fact {
  return parseWith(FactSchema, 'fact', value);
}
