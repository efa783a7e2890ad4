import { Hono } from 'hono';
import { readJsonBody, readParam } from './read-request.js';
import { EmptyRequestSchema, HandoffRequestSchema, IdSchema } from './request-schemas.js';
import { liveInvocation, type RouteContext } from './route-context.js';
import { ServerError } from './server-error.js';

/**
 * The handoff gate over HTTP: reserve (waits for a safe point and answers with the
 * pause a commit would seal), then commit or release. Between the two the run is
 * held for at most the hold lease.
 */
export function handoffRoutes(context: RouteContext): Hono {
  const app = new Hono();

  app.post('/invocations/:id/handoff', async (c) => {
    const id = readParam(c, 'id', IdSchema);
    const { intent } = await readJsonBody(c, HandoffRequestSchema);
    const live = await liveInvocation(context, id);
    const signal = AbortSignal.any([c.req.raw.signal, context.closing]);
    const preview = await live.reserveHandoff(intent, { ...context.handoff, signal });
    return c.json({ invocation: live.invocation, preview, holdMs: context.handoff.holdMs });
  });

  app.post('/invocations/:id/handoff/commit', async (c) => {
    const id = readParam(c, 'id', IdSchema);
    await readJsonBody(c, EmptyRequestSchema);
    const live = await liveInvocation(context, id);
    const pause = await live.commitHandoff();
    return c.json({ invocation: live.invocation, pause });
  });

  app.post('/invocations/:id/handoff/release', async (c) => {
    const id = readParam(c, 'id', IdSchema);
    await readJsonBody(c, EmptyRequestSchema);
    const live = await liveInvocation(context, id);
    if (!live.holding) {
      throw new ServerError('no_held_handoff', `invocation ${id} holds no handoff to release`);
    }
    live.releaseHandoff();
    return c.json({ invocation: live.invocation, released: true });
  });

  return app;
}
