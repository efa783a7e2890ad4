import type { MiddlewareHandler } from 'hono';
import { errorResponse } from './error-response.js';
import { ServerError } from './server-error.js';
import type { ServerToken } from './server-token.js';

/**
 * Requires `Authorization: Bearer <token>`. Where `allowQueryToken` says so (the SSE
 * tail only: a browser's EventSource cannot set headers), `?token=` is accepted too.
 * Runs before any body is read, so a refused request writes nothing.
 */
export function bearerAuth(
  token: ServerToken,
  options: { allowQueryToken?: (path: string) => boolean } = {},
): MiddlewareHandler {
  return async (c, next) => {
    const header = c.req.header('authorization');
    const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
    let candidate = match?.[1];
    if (candidate === undefined && options.allowQueryToken?.(c.req.path) === true) {
      candidate = c.req.query('token');
    }
    if (candidate === undefined || !token.verify(candidate)) {
      c.header('www-authenticate', 'Bearer realm="factum"');
      const message =
        candidate === undefined
          ? 'no bearer token: send `Authorization: Bearer <token>` (printed by `factum serve` at first start)'
          : 'the bearer token is not this server’s token';
      return errorResponse(c, new ServerError('unauthorized', message));
    }
    await next();
  };
}
