import { setTimeout as sleep } from 'node:timers/promises';
import { recordedOutcome } from '@factum/engine';
import { Hono } from 'hono';
import { z } from 'zod';
import { readParam, readQuery } from './read-request.js';
import { IdSchema } from './request-schemas.js';
import type { RouteContext } from './route-context.js';
import { ServerError } from './server-error.js';

/** `?wait=` in milliseconds: how long to wait for the end before answering 202. */
const OutcomeQuerySchema = z.strictObject({
  wait: z.coerce.number().int().min(0).max(60_000).optional(),
});

/** How often a run live on another process is looked up again while a request waits. */
const POLL_MS = 100;

/** An invocation's events are read whole to build its outcome, within these bounds. */
const OUTCOME_BOUNDS = { maxEvents: 100_000, maxBytes: 64 * 1024 * 1024 };

/**
 * `GET /invocations/:id/outcome[?wait=ms]`: how a run ended — its outcome, steps, usage
 * and final answer (`RunOutcome`), read from its facts — without paging the log. 200
 * `{ invocation, ended: true, outcome }` once it has ended; 202 `{ invocation, ended:
 * false }` while it runs, after waiting up to `wait` milliseconds (at most a minute) for
 * it to end, whether this server, another process or another host runs it.
 */
export function outcomeRoutes(context: RouteContext): Hono {
  const app = new Hono();

  app.get('/invocations/:id/outcome', async (c) => {
    const id = readParam(c, 'id', IdSchema);
    const { wait = 0 } = readQuery(c, OutcomeQuerySchema);
    const signal = AbortSignal.any([c.req.raw.signal, context.closing, AbortSignal.timeout(wait)]);
    const stop = aborted(signal);
    let known = await lookUp(context, id);
    while (known.status === 'open' && !signal.aborted) {
      const live = context.registry.get(id);
      const ended = live === undefined ? sleep(POLL_MS, undefined, { signal }) : live.ended;
      await Promise.race([ended, stop]).catch(() => undefined);
      known = await lookUp(context, id);
    }
    if (known.status === 'open') return c.json({ invocation: known.invocation, ended: false }, 202);
    const events = await context.runtime.log.invocationEvents(known.invocation, OUTCOME_BOUNDS);
    return c.json({ invocation: known.invocation, ended: true, outcome: recordedOutcome(events) }, 200);
  });

  return app;
}

async function lookUp(context: RouteContext, id: string) {
  await context.follower.catchUp();
  const known = context.index.invocation(id);
  if (known === undefined) throw new ServerError('not_found', `no invocation ${id} in the log`);
  return known;
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
