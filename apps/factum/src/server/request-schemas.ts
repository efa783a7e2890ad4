import { HandoffIntentSchema, ToolModeSchema } from '@factum/agent-facts';
import { z } from 'zod';

/** A session or invocation id as it appears in a path: the log's own id bounds. */
export const IdSchema = z.string().min(1).max(256);

/** The body of `POST /api/sessions/:session/turns`. */
export const TurnRequestSchema = z.strictObject({
  message: z.string().min(1).max(200_000),
  toolMode: ToolModeSchema.optional(),
  /** Start even though earlier operations of the session have unknown outcomes. */
  allowPriorUnknown: z.boolean().optional(),
});
export type TurnRequest = z.infer<typeof TurnRequestSchema>;

/** The body of `POST /api/invocations/:id/handoff`. */
export const HandoffRequestSchema = z.strictObject({ intent: HandoffIntentSchema });
export type HandoffRequest = z.infer<typeof HandoffRequestSchema>;

/** The body of the bodiless actions (cancel, commit, release): nothing, or `{}`. */
export const EmptyRequestSchema = z.strictObject({});

const sequence = z.coerce.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/** The query of `GET /api/events`. */
export const EventsQuerySchema = z.strictObject({
  after: sequence.default(0),
  limit: z.coerce.number().int().min(1).max(1000).default(200),
  session: IdSchema.optional(),
});

/** The query of the SSE tail (the token may ride here, since EventSource sends no headers). */
export const StreamQuerySchema = z.strictObject({
  after: sequence.optional(),
  token: z.string().optional(),
});
