import { z } from 'zod';

// Ids and names the observation matches on; an empty one would match nothing, silently.
const name = z.string().min(1);

/**
 * The server events a prompt observation understands, keyed by their `type`, each
 * mapped from the server's shape (`{ type, properties }`, camel-cased `ID`s) to ours.
 * Optional text is lenient on purpose: a part without text is still a part.
 */
export const KnownEventSchemas = {
  'server.connected': z.object({}).transform(() => ({ type: 'server.connected' }) as const),
  'message.updated': z
    .object({
      properties: z.object({
        info: z.object({
          sessionID: name,
          id: name,
          role: name,
          parentID: z.string().nullable().catch(null),
          finish: z.string().nullish().catch(null),
          time: z
            .object({ completed: z.number().nullish().catch(null) })
            .nullish()
            .catch(null),
        }),
      }),
    })
    .transform(
      ({ properties: { info } }) =>
        ({
          type: 'message.updated',
          sessionId: info.sessionID,
          messageId: info.id,
          role: info.role,
          parentId: info.parentID,
          // Finished: its last part and delta were sent before this event.
          completed: Boolean(info.finish || info.time?.completed),
        }) as const,
    ),
  'message.part.updated': z
    .object({
      properties: z.object({
        part: z.object({
          sessionID: name,
          messageID: name,
          id: name,
          type: name,
          text: z.string().nullable().catch(null),
        }),
      }),
    })
    .transform(
      ({ properties: { part } }) =>
        ({
          type: 'message.part.updated',
          sessionId: part.sessionID,
          messageId: part.messageID,
          partId: part.id,
          partType: part.type,
          text: part.text,
        }) as const,
    ),
  'message.part.delta': z
    .object({
      properties: z.object({
        // A delta may be empty; it must still be text.
        delta: z.string(),
        sessionID: name,
        messageID: name,
        partID: name,
        field: name,
      }),
    })
    .transform(
      ({ properties: p }) =>
        ({
          type: 'message.part.delta',
          sessionId: p.sessionID,
          messageId: p.messageID,
          partId: p.partID,
          field: p.field,
          delta: p.delta,
        }) as const,
    ),
  'session.status': z
    .object({ properties: z.object({ sessionID: name, status: z.object({ type: name }) }) })
    .transform(
      ({ properties: p }) =>
        ({ type: 'session.status', sessionId: p.sessionID, status: p.status.type }) as const,
    ),
  'session.idle': z
    .object({ properties: z.object({ sessionID: name }) })
    .transform(({ properties: p }) => ({ type: 'session.idle', sessionId: p.sessionID }) as const),
};

/** A `type` the observation understands. */
export type KnownEventType = keyof typeof KnownEventSchemas;

/**
 * Any event: an object with a string `type`. Events of other types are kept as
 * `other` (a newer server may send more) rather than rejected.
 */
export const OtherEventSchema = z
  .object({ type: z.string() })
  .transform(({ type }) => ({ type: 'other', name: type }) as const);

/** The server events a prompt observation understands; everything else is `other`. */
export type OpenCodeEvent =
  | z.output<(typeof KnownEventSchemas)[KnownEventType]>
  | z.output<typeof OtherEventSchema>;

/** Whether events of this `type` have a schema of their own. */
export function isKnownEventType(type: string): type is KnownEventType {
  return Object.hasOwn(KnownEventSchemas, type);
}
