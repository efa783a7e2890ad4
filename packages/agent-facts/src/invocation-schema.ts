import { z } from 'zod';
import { factObject } from './fact-object.js';

const id = z.string().min(1).max(256);

/**
 * Who a fact belongs to. A session holds turns (one exchange as a user sees it), a
 * turn holds runs (one durable attempt), a run holds invocations (one call of the
 * agent loop).
 */
export const InvocationSchema = factObject({
  sessionId: id,
  turnId: id,
  runId: id,
  invocationId: id,
});
export type Invocation = z.infer<typeof InvocationSchema>;

/** Which slice of the log a prefix covers: the whole log, or one session. */
export const LogScopeSchema = z.discriminatedUnion('kind', [
  factObject({ kind: z.literal('global') }),
  factObject({ kind: z.literal('session'), id }),
]);
export type LogScope = z.infer<typeof LogScopeSchema>;

/**
 * The end of a run as the log saw it: the run's last invocation, the sequence of its
 * last event, and the session chain digest there. A continuation or a handoff starts
 * from one, and the context it sees is bounded by it.
 */
export const RunBoundarySchema = factObject({
  invocation: InvocationSchema,
  highWater: z.number().int().nonnegative(),
  digest: z.string(),
});
export type RunBoundary = z.infer<typeof RunBoundarySchema>;
