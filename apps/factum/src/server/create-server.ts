import { ToolCatalog } from '@factum/tools';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { webRoutes } from '../web/web-routes.js';
import { approvalRoutes } from './approval-routes.js';
import { bearerAuth } from './bearer-auth.js';
import { errorResponse } from './error-response.js';
import { eventRoutes } from './event-routes.js';
import { forkRoutes } from './fork-routes.js';
import { handoffRoutes } from './handoff-routes.js';
import { InvocationRegistry } from './invocation-registry.js';
import { LogFollower } from './log-follower.js';
import { outcomeRoutes } from './outcome-routes.js';
import { replayRoutes } from './replay-routes.js';
import type { RouteContext } from './route-context.js';
import { ServerError } from './server-error.js';
import { SERVER_DEFAULTS, type ServerOptions } from './server-options.js';
import { ServerToken } from './server-token.js';
import { SessionIndex } from './session-index.js';
import { sessionRoutes } from './session-routes.js';
import { turnRoutes } from './turn-routes.js';
import { verifyRoutes } from './verify-routes.js';

/**
 * The HTTP API and the web timeline as a hono app: bearer auth on every `/api` route,
 * body size limits, zod-checked input, typed refusals as `{ error: { code, message } }`.
 * A refused request (400, 401, 404, 409, 413) writes nothing to the log.
 *
 * - `POST /api/sessions/:session/turns` `{ message, toolMode?, allowPriorUnknown? }` → 202 `{ invocation }`
 * - `POST /api/invocations/:id/cancel` → 202
 * - `POST /api/invocations/:id/handoff` `{ intent }` → `{ preview }` at a safe point (504 past the wait)
 * - `POST /api/invocations/:id/handoff/commit` → `{ pause }`; `…/handoff/release` → `{ released }`
 * - `GET /api/events?after=&limit=&session=` → `{ events, nextAfter, more }`
 * - `GET /api/approvals`; `POST /api/operations/:id/decision` `{ decision, note?, inputDigest? }`;
 *   `POST /api/operations/:id/resolution` `{ outcome, result?, note }` (409 on a conflict)
 * - `GET /api/sessions`, `GET /api/sessions/:session`, `GET /api/invocations/:id/recovery`
 * - `POST /api/replays` `{ target, mode? }` → the replay's report (runs no effect, writes nothing)
 * - `GET /api/sessions/:session/events/stream` (SSE; `Last-Event-ID` or `?after=`; `?token=` allowed)
 * - `GET /` the web timeline
 *
 * @example
 * const runtime = await FactumRuntime.open({ target: { dataDir: '.factum' } });
 * const app = createServer({ runtime, token, provider: resolveProvider({}) });
 * const response = await app.request('/api/sessions', { headers: { authorization: `Bearer ${token}` } });
 */
export function createServer(options: ServerOptions): Hono {
  const token = typeof options.token === 'string' ? ServerToken.fromToken(options.token) : options.token;
  const maxBodyBytes = options.maxBodyBytes ?? SERVER_DEFAULTS.maxBodyBytes;
  const index = new SessionIndex();
  const follower = new LogFollower({
    log: options.runtime.log,
    index,
    intervalMs: options.pollIntervalMs ?? SERVER_DEFAULTS.pollIntervalMs,
  });
  const registry = options.registry ?? new InvocationRegistry();
  const closing = options.signal ?? new AbortController().signal;
  const onClose = () => {
    follower.close();
    registry.releaseAll();
  };
  if (closing.aborted) onClose();
  else closing.addEventListener('abort', onClose, { once: true });

  const { provider, tools } = options;
  const context: RouteContext = {
    runtime: options.runtime,
    registry,
    index,
    follower,
    provider: () => {
      if (provider === undefined) {
        throw new ServerError(
          'no_provider',
          'no model provider: start `factum serve` with --base-url and --model',
        );
      }
      return typeof provider === 'function' ? provider() : provider;
    },
    tools: typeof tools === 'function' ? tools : () => tools ?? new ToolCatalog(),
    cwd: options.cwd ?? process.cwd(),
    instructions: options.instructions,
    handoff: { ...SERVER_DEFAULTS.handoff, ...options.handoff },
    closing,
    requireApproval: options.requireApproval ?? [],
    operator: options.operator ?? 'web',
  };

  const app = new Hono();
  app.use('/api/*', async (c, next) => {
    await next();
    c.header('cache-control', 'no-store');
  });
  app.use('/api/*', bearerAuth(token, { allowQueryToken: (path) => path.endsWith('/events/stream') }));
  app.use(
    '/api/*',
    bodyLimit({
      maxSize: maxBodyBytes,
      onError: (c) =>
        errorResponse(c, new ServerError('payload_too_large', `the body is over ${maxBodyBytes} bytes`)),
    }),
  );
  app.route('/api', turnRoutes(context));
  app.route('/api', handoffRoutes(context));
  app.route('/api', outcomeRoutes(context));
  app.route('/api', approvalRoutes(context));
  app.route('/api', eventRoutes(context));
  app.route('/api', sessionRoutes(context));
  app.route('/api', forkRoutes(context));
  app.route('/api', replayRoutes(context));
  app.route('/api', verifyRoutes(context));
  app.route('/', webRoutes());
  app.notFound((c) =>
    errorResponse(c, new ServerError('not_found', `no route ${c.req.method} ${c.req.path}`)),
  );
  app.onError((error, c) => {
    const response = errorResponse(c, error);
    // Our own refusals (no provider, shutting down, a handoff timeout) are answers, not faults.
    if (response.status >= 500 && !ServerError.isInstance(error)) {
      options.logger?.error(`${c.req.method} ${c.req.path} failed: ${describe(error)}`);
    }
    return response;
  });
  return app;
}

/** Names the error without its message, which might quote a provider's reply. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  const code = 'code' in error && typeof error.code === 'string' ? ` (${error.code})` : '';
  return `${error.name}${code}`;
}
