import { z } from 'zod';

/** The answer to `POST /session`: the new session, of which only the id matters. */
export const SessionAnswerSchema = z.object({ id: z.string().min(1), version: z.string().optional() });

/**
 * The answer to `GET /session/status`: a map from session id to status. Entries are
 * parsed one at a time (`NativeStatusEntrySchema`) so that another session's odd
 * entry cannot fail this one's status.
 */
export const SessionStatusMapSchema = z.record(z.string(), z.unknown());

/** Status of a session as the server reports it. */
export const NativeStatusSchema = z.enum(['idle', 'busy', 'retry']);
/** Status of a session as the server reports it. */
export type NativeStatus = z.infer<typeof NativeStatusSchema>;

/** One entry of the status map; a session missing from the map is idle. */
export const NativeStatusEntrySchema = z.object({ type: NativeStatusSchema });

// Any error value counts as an error: its name and text are reported when they are
// strings, and replaced rather than rejected when not, so the outcome is never lost.
const AssistantErrorSchema = z
  .object({
    name: z.string().catch('UnknownError'),
    data: z.object({ message: z.string().catch('') }).catch({ message: '' }),
  })
  .catch({ name: 'UnknownError', data: { message: '' } });

// Only text parts carry the answer; tool, reasoning and file parts add nothing to it
// (an empty string) instead of failing an answer the server has otherwise completed.
const AnswerTextSchema = z
  .object({ type: z.literal('text'), text: z.string() })
  .transform((part) => part.text)
  .catch('');

/**
 * An assistant message with its parts (`{ info: AssistantMessage, parts: Part[] }`), as
 * `POST /session/:id/message` answers and `GET /session/:id/message` lists: its id, the
 * user message it answers (`parentID`), the error (absent or `null` when it has none),
 * the server's `finish` reason (absent until the model finished a step), whether it is
 * completed, and the text of each text part.
 */
export const PromptAnswerSchema = z.object({
  info: z.object({
    id: z.string(),
    parentID: z.string().nullish(),
    error: AssistantErrorSchema.nullish(),
    finish: z.string().nullish().catch(null),
    time: z
      .object({ completed: z.number().nullish().catch(null) })
      .nullish()
      .catch(null),
  }),
  parts: z.array(AnswerTextSchema),
});

/**
 * One entry of `GET /session/:id/message`: only assistant messages matter, and an entry
 * of another shape (a user message, a newer kind) is skipped rather than failing the list.
 */
export const SessionMessageSchema = z.object({
  info: z.object({ id: z.string(), role: z.string(), parentID: z.string().nullish() }),
});

/** One entry of `GET /session/:id/message` with its parts; a part of another shape is skipped. */
export const SessionMessagePartsSchema = SessionMessageSchema.extend({
  parts: z
    .array(
      z
        .object({ id: z.string().min(1), type: z.string().min(1), text: z.string().nullish().catch(null) })
        .nullable()
        .catch(null),
    )
    .transform((parts) => parts.filter((part) => part !== null)),
});

/** The answer to `GET /session/:id/message`: the session's messages in creation order. */
export const SessionMessagesSchema = z.array(z.unknown());
