import { HandoffIntentSchema, ToolModeSchema } from '@factum/agent-facts';
import { z } from 'zod';
import { AnchorTextSchema } from '../commands/json-output-schemas.js';

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

/**
 * The body of `POST /api/sessions/:session/forks`: where to fork (an invocation id, or a
 * step id `<invocation>/<n>`; default: the last invocation that ended) and, optionally,
 * the message the fork's first turn runs.
 */
export const ForkRequestSchema = z.strictObject({
  at: IdSchema.optional(),
  message: z.string().min(1).max(200_000).optional(),
  toolMode: ToolModeSchema.optional(),
  /** Start the fork's turn even though operations of its prefix have unknown outcomes. */
  allowPriorUnknown: z.boolean().optional(),
});
export type ForkRequest = z.infer<typeof ForkRequestSchema>;

/** The body of `POST /api/invocations/:id/handoff`. */
export const HandoffRequestSchema = z.strictObject({ intent: HandoffIntentSchema });
export type HandoffRequest = z.infer<typeof HandoffRequestSchema>;

/** The body of `POST /api/operations/:id/decision`. */
export const DecisionRequestSchema = z.strictObject({
  decision: z.enum(['approve', 'deny']),
  note: z.string().min(1).max(2048).optional(),
  /** The digest of the input the client showed: the decision is refused if the call's differs. */
  inputDigest: z
    .string()
    .regex(/^sha256:[0-9a-f]{64}$/)
    .optional(),
});
export type DecisionRequest = z.infer<typeof DecisionRequestSchema>;

/** The body of `POST /api/operations/:id/resolution`. */
export const ResolutionRequestSchema = z
  .strictObject({
    outcome: z.enum(['succeeded', 'failed', 'not_run']),
    result: z
      .string()
      .max(64 * 1024)
      .optional(),
    note: z.string().min(1).max(2048),
  })
  .refine((body) => body.result === undefined || body.outcome === 'succeeded', {
    message: 'result goes with outcome succeeded only',
    path: ['result'],
  });
export type ResolutionRequest = z.infer<typeof ResolutionRequestSchema>;

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

/** `GET /api/verify`: `anchor` as often as needed, nothing else. */
export const VerifyQuerySchema = z.strictObject({ anchor: z.array(AnchorTextSchema).default([]) });
