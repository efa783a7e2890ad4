import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { readQuery } from './read-request.js';
import { StreamQuerySchema } from './request-schemas.js';
import type { RouteContext } from './route-context.js';
import { ServerError } from './server-error.js';

const PAGE = 500;
const HEARTBEAT_MS = 15_000;

/**
 * Server-sent events of one session: every fact after the cursor (`Last-Event-ID`,
 * else `?after=`, else the start), then each new fact as it is written. Each message
 * is `event: fact`, `id: <sequence>`, `data: {"sequence", "event"}`, so a reconnecting
 * EventSource resumes exactly where it stopped. An `approval_requested` or
 * `approval_decided` fact is followed by an event of that name with the same data (and
 * no id of its own), so a client can listen for the decisions alone.
 */
export function streamSessionEvents(c: Context, context: RouteContext, sessionId: string): Response {
  const query = readQuery(c, StreamQuerySchema);
  const lastEventId = c.req.header('last-event-id');
  let cursor = query.after ?? 0;
  if (lastEventId !== undefined && lastEventId !== '') {
    if (!/^\d{1,15}$/.test(lastEventId)) {
      throw new ServerError('invalid_request', 'Last-Event-ID must be a sequence number', {
        path: 'last-event-id',
      });
    }
    cursor = Number(lastEventId);
  }
  c.header('cache-control', 'no-store');
  // Proxies that buffer would hold back the live tail.
  c.header('x-accel-buffering', 'no');
  return streamSSE(
    c,
    async (stream) => {
      const ended = new AbortController();
      stream.onAbort(() => ended.abort());
      const signal = AbortSignal.any([ended.signal, context.closing]);
      await stream.writeSSE({ event: 'ready', data: JSON.stringify({ session: sessionId, after: cursor }) });
      while (!signal.aborted) {
        const seen = context.follower.highWater;
        const page = await context.runtime.log.read({
          afterSequence: cursor,
          limit: PAGE,
          scope: { session: sessionId },
        });
        for (const stored of page) {
          if (signal.aborted) return;
          const data = JSON.stringify(stored);
          await stream.writeSSE({ id: String(stored.sequence), event: 'fact', data });
          // Decisions a person must take are also named events, for clients that wait only for them.
          const kind = stored.event.fact.kind;
          if (kind === 'approval_requested' || kind === 'approval_decided')
            await stream.writeSSE({ event: kind, data });
          cursor = stored.sequence;
        }
        if (page.length === PAGE) continue;
        const beat = AbortSignal.timeout(HEARTBEAT_MS);
        await context.follower.waitPast(seen, AbortSignal.any([signal, beat]));
        // A comment line keeps idle connections open through proxies and detects dead clients.
        if (beat.aborted && !signal.aborted) await stream.write(': keep-alive\n\n');
      }
    },
    async (_error, stream) => {
      // The cause stays on the server; the client learns only that the tail stopped.
      await stream.writeSSE({ event: 'error', data: JSON.stringify({ code: 'internal' }) });
    },
  );
}
