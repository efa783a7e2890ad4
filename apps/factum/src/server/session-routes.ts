import { FactumError } from '@factum/agent-facts';
import { Hono } from 'hono';
import { readParam } from './read-request.js';
import { IdSchema } from './request-schemas.js';
import type { RouteContext } from './route-context.js';
import { ServerError } from './server-error.js';
import type { InvocationSummary } from './session-index.js';

/** How a session stands: `running` on this server, else its latest invocation's status. */
export type SessionStatus = 'running' | InvocationSummary['status'];

const RECOVERY_BOUNDS = { maxEvents: 100_000, maxBytes: 64 * 1024 * 1024 };

/**
 * `GET /sessions` lists sessions with their status, `GET /sessions/:session` one
 * session's invocations, and `GET /invocations/:id/recovery` what recovery knows of
 * one invocation: operations left uncertain and calls never dispatched.
 * `GET /sessions/:session/results/:event` returns the result a settlement stored.
 */
export function sessionRoutes(context: RouteContext): Hono {
  const app = new Hono();

  app.get('/sessions', async (c) => {
    await context.follower.catchUp();
    const sessions = context.index.sessions().map(({ id, invocations }) => {
      const latest = invocations.at(-1);
      return {
        id,
        status: statusOf(context, id, latest),
        title: invocations.find((summary) => summary.message !== undefined)?.message,
        invocations: invocations.length,
        events: invocations.reduce((sum, summary) => sum + summary.events, 0),
        unsettledOperations: invocations.reduce((sum, summary) => sum + summary.unsettledOperations, 0),
        rejections: invocations.reduce((sum, summary) => sum + summary.rejections, 0),
        lastSequence: Math.max(0, ...invocations.map((summary) => summary.lastSequence)),
        updatedAt: latest?.updatedAt,
      };
    });
    return c.json({ sessions, highWater: context.follower.highWater });
  });

  app.get('/sessions/:session', async (c) => {
    const id = readParam(c, 'session', IdSchema);
    await context.follower.catchUp();
    const invocations = context.index.session(id);
    if (invocations === undefined) throw new ServerError('not_found', `no session ${id} in the log`);
    const fork = context.index.forkOf(id);
    return c.json({
      id,
      status: statusOf(context, id, invocations.at(-1)),
      ...(fork === undefined
        ? {}
        : { forkedFrom: { source: fork.source, ...(fork.step ? { step: fork.step } : {}) } }),
      invocations: invocations.map((summary) => ({
        ...summary,
        live: context.registry.get(summary.invocation.invocationId) !== undefined,
      })),
    });
  });

  // A stored tool result, for viewers that expand a settlement in place. Results are
  // keyed by session, so a result id from another session is not found here.
  app.get('/sessions/:session/results/:event', async (c) => {
    const sessionId = readParam(c, 'session', IdSchema);
    const eventId = readParam(c, 'event', IdSchema);
    try {
      const result = await context.runtime.log.resolveToolResult(sessionId, eventId);
      return c.json({ eventId, result: result.json() });
    } catch (error) {
      if (FactumError.isInstance(error) && error.code === 'result_missing')
        throw new ServerError('not_found', error.message, { cause: error });
      throw error;
    }
  });

  app.get('/invocations/:id/recovery', async (c) => {
    const id = readParam(c, 'id', IdSchema);
    await context.follower.catchUp();
    const summary = context.index.invocation(id);
    if (summary === undefined) throw new ServerError('not_found', `no invocation ${id} in the log`);
    const recovery = await context.runtime.log.invocationRecovery(summary.invocation, RECOVERY_BOUNDS);
    return c.json({
      invocation: summary.invocation,
      live: context.registry.get(id) !== undefined,
      ...recovery,
    });
  });

  return app;
}

function statusOf(
  context: RouteContext,
  sessionId: string,
  latest: InvocationSummary | undefined,
): SessionStatus {
  if (context.registry.runsSession(sessionId)) return 'running';
  return latest?.status ?? 'open';
}
