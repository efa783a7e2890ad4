import { z } from 'zod';
import { factObject } from './fact-object.js';
import { type Invocation, RunBoundarySchema } from './invocation-schema.js';

/**
 * A request to move a turn to a successor run, possibly on another host. The intent
 * names the successor in advance so that only it may continue the turn.
 */
export const HandoffIntentSchema = factObject({
  handoffId: z.string().min(1),
  hostEpoch: z.string().min(1),
  rootRunId: z.string().min(1),
  successorRunId: z.string().min(1),
  successorInvocationId: z.string().min(1),
  claimId: z.string().min(1),
});
export type HandoffIntent = z.infer<typeof HandoffIntentSchema>;

/**
 * What a successor must match to continue a paused turn. `fingerprint` digests the
 * configuration, provider, model, options, output limit and tools; `replayBase` is
 * the boundary the paused run itself continued from, when it was a continuation.
 */
export const HandoffExecutionSchema = factObject({
  fingerprint: z.string().startsWith('sha256:'),
  mainOutputLimit: z.number().int().positive().optional(),
  replayBase: RunBoundarySchema.optional(),
  steps: z.number().int().nonnegative(),
});
export type HandoffExecution = z.infer<typeof HandoffExecutionSchema>;

/** A sealed handoff: the intent and the execution a successor must match. */
export const HandoffPauseSchema = factObject({
  intent: HandoffIntentSchema,
  execution: HandoffExecutionSchema,
});
export type HandoffPause = z.infer<typeof HandoffPauseSchema>;

/** The invocation a handoff's successor runs as: same session and turn, the intent's run. */
export function successorOf(intent: HandoffIntent, source: Invocation): Invocation {
  return {
    sessionId: source.sessionId,
    turnId: source.turnId,
    runId: intent.successorRunId,
    invocationId: intent.successorInvocationId,
  };
}
