import { Hono } from 'hono';
import { TIMELINE_PAGE } from './timeline-page.js';
import { timelineScript } from './timeline-script.js';
import { TIMELINE_STYLE } from './timeline-style.js';

// Scripts and styles come only from this server; nothing inline, no framing.
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The web timeline: a static page, its stylesheet and its script. They hold no data
 * and need no token; the page asks for one and calls the API with it.
 */
export function webRoutes(): Hono {
  const app = new Hono();
  app.use('*', async (c, next) => {
    await next();
    c.header('content-security-policy', CONTENT_SECURITY_POLICY);
    c.header('x-content-type-options', 'nosniff');
    c.header('referrer-policy', 'no-referrer');
    c.header('cache-control', 'no-cache');
  });
  app.get('/', (c) => c.html(TIMELINE_PAGE));
  app.get('/assets/timeline.css', (c) =>
    c.body(TIMELINE_STYLE, 200, { 'content-type': 'text/css; charset=utf-8' }),
  );
  app.get('/assets/timeline.js', (c) =>
    c.body(timelineScript(), 200, { 'content-type': 'text/javascript; charset=utf-8' }),
  );
  return app;
}
