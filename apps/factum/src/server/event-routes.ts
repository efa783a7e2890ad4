import { Hono } from 'hono';
import { readParam, readQuery } from './read-request.js';
import { EventsQuerySchema, IdSchema } from './request-schemas.js';
import type { RouteContext } from './route-context.js';
import { streamSessionEvents } from './session-event-stream.js';

/**
 * `GET /events` pages through the log (`after`, `limit`, optional `session`);
 * `GET /sessions/:session/events/stream` replays a session's facts and tails new ones.
 */
export function eventRoutes(context: RouteContext): Hono {
  const app = new Hono();

  app.get('/events', async (c) => {
    const query = readQuery(c, EventsQuerySchema);
    // One more than asked tells whether another page follows without a second query.
    const page = await context.runtime.log.read({
      afterSequence: query.after,
      limit: query.limit + 1,
      ...(query.session === undefined ? {} : { scope: { session: query.session } }),
    });
    const events = page.slice(0, query.limit);
    return c.json({
      events,
      nextAfter: events.at(-1)?.sequence ?? query.after,
      more: page.length > query.limit,
    });
  });

  app.get('/sessions/:session/events/stream', (c) => {
    const sessionId = readParam(c, 'session', IdSchema);
    return streamSessionEvents(c, context, sessionId);
  });

  return app;
}
