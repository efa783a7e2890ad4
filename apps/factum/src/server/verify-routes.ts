import { Hono } from 'hono';
import { AnchorTextSchema } from '../commands/json-output-schemas.js';
import { verifyOutputOf } from '../commands/verify.js';
import type { RouteContext } from './route-context.js';
import { ServerError } from './server-error.js';

/**
 * `GET /verify?anchor=…` (repeatable): what `factum verify --json` prints, for a monitor
 * that keeps heads elsewhere and asks now and then whether the log still holds them.
 * 200 whether or not the log verifies (`ok` and `broken` say); 400 for a malformed anchor.
 */
export function verifyRoutes(context: RouteContext): Hono {
  const app = new Hono();
  app.get('/verify', async (c) => {
    const unknown = Object.keys(c.req.queries()).filter((key) => key !== 'anchor');
    if (unknown.length > 0)
      throw new ServerError('invalid_request', `query.${unknown[0]}: not a parameter of /verify`, {
        path: unknown[0]!,
      });
    const anchors = (c.req.queries('anchor') ?? []).map((text, index) => {
      const parsed = AnchorTextSchema.safeParse(text);
      if (parsed.success) return parsed.data;
      throw new ServerError('invalid_request', `query.anchor.${index}: ${parsed.error.issues[0]?.message}`, {
        path: `anchor.${index}`,
      });
    });
    const report = await context.runtime.log.verifyChain({ anchors });
    return c.json(verifyOutputOf(report, anchors));
  });
  return app;
}
