import type { ReplayTarget } from '@factum/engine';
import { Hono } from 'hono';
import { z } from 'zod';
import { readJsonBody } from './read-request.js';
import { IdSchema } from './request-schemas.js';
import type { RouteContext } from './route-context.js';
import { ServerError } from './server-error.js';

/** `POST /replays`: what to replay and how. */
export const ReplayRequestSchema = z.strictObject({
  target: z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('all') }),
    z.strictObject({ kind: z.literal('session'), sessionId: IdSchema }),
    z.strictObject({ kind: z.literal('invocation'), invocationId: IdSchema }),
  ]),
  mode: z.enum(['verify', 'model']).default('verify'),
});

/**
 * `POST /replays` `{ target, mode? }` → 200 with the `ReplayReport` once the replay is
 * done: one request, no job to poll — a replay runs no effect and writes nothing, so a
 * client that goes away loses nothing (its abort stops the replay). `verify` (the
 * default) takes each step's route from its recorded request; `model` asks this server's
 * provider. The agent is the server's: its tools, instructions and approval rules.
 */
export function replayRoutes(context: RouteContext): Hono {
  const app = new Hono();

  app.post('/replays', async (c) => {
    const request = await readJsonBody(c, ReplayRequestSchema);
    const target = await targetOf(context, request.target);
    const provider = request.mode === 'model' ? context.provider() : recordedRoute(context);
    const report = await context.runtime.engine.replay(context.runtime.log, {
      target,
      mode: request.mode,
      route: 'recorded',
      agent: {
        provider,
        catalog: context.tools(),
        ...(context.instructions === undefined ? {} : { instructions: context.instructions }),
        approvals: { requireApproval: context.requireApproval },
      },
      signal: AbortSignal.any([c.req.raw.signal, context.closing]),
    });
    return c.json(report, 200);
  });

  return app;
}

async function targetOf(
  context: RouteContext,
  target: z.infer<typeof ReplayRequestSchema>['target'],
): Promise<ReplayTarget> {
  await context.follower.catchUp();
  if (target.kind === 'all') return target;
  if (target.kind === 'session') {
    if (context.index.session(target.sessionId) === undefined) {
      throw new ServerError('not_found', `no session ${target.sessionId} in the log`);
    }
    return target;
  }
  const known = context.index.invocation(target.invocationId);
  if (known === undefined)
    throw new ServerError('not_found', `no invocation ${target.invocationId} in the log`);
  return { kind: 'invocation', sessionId: known.invocation.sessionId, invocationId: target.invocationId };
}

/** A verify replay needs no model: the server's provider when it has one, else each step's recorded route. */
function recordedRoute(context: RouteContext) {
  try {
    return context.provider();
  } catch {
    return {
      kind: 'openai_chat_completions' as const,
      baseUrl: 'http://127.0.0.1/v1',
      model: 'recorded',
      auth: { none: true as const },
    };
  }
}
