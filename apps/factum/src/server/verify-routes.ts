import { Hono } from 'hono';
import { verifyOutputOf } from '../commands/verify.js';
import { readQueries } from './read-request.js';
import { VerifyQuerySchema } from './request-schemas.js';
import type { RouteContext } from './route-context.js';

/**
 * `GET /verify?anchor=…` (repeatable): what `factum verify --json` prints, for a monitor
 * that keeps heads elsewhere and asks now and then whether the log still holds them.
 * 200 whether or not the log verifies (`ok` and `broken` say); 400 for a malformed anchor.
 */
export function verifyRoutes(context: RouteContext): Hono {
  const app = new Hono();
  app.get('/verify', async (c) => {
    const { anchor: anchors } = readQueries(c, VerifyQuerySchema);
    const report = await context.runtime.log.verifyChain({ anchors });
    return c.json(verifyOutputOf(report, anchors));
  });
  return app;
}
