import { RunError } from '@factum/engine';
import { Hono } from 'hono';
import { newInvocation } from '../new-invocation.js';
import { readJsonBody, readParam } from './read-request.js';
import { ForkRequestSchema, IdSchema } from './request-schemas.js';
import type { RouteContext } from './route-context.js';
import { ServerError } from './server-error.js';
import { messageRun, resolveProvider } from './turn-routes.js';

/**
 * `POST /sessions/:session/forks` forks a session (`{ at?, message? }`) and answers 201
 * with the new `session` once its `session_forked` is durable — and, with a message, the
 * `invocation` of its first turn, started as `POST …/turns` starts one (or, when the engine
 * refuses that turn, `refused: { code, message }`: the fork stays). A refusal of the
 * log's rules keeps its code: `unknown_session` (404), `invalid_boundary`,
 * `source_live`, `session_exists` (409); nothing is written.
 */
export function forkRoutes(context: RouteContext): Hono {
  const app = new Hono();

  app.post('/sessions/:session/forks', async (c) => {
    const sessionId = readParam(c, 'session', IdSchema);
    const body = await readJsonBody(c, ForkRequestSchema);
    if (context.closing.aborted) throw new ServerError('shutting_down', 'the server is closing; fork later');
    // Checked before the fork, so a turn that cannot start leaves no fork behind.
    const provider = body.message === undefined ? undefined : resolveProvider(context);
    const at = body.at === undefined ? {} : { at: body.at };
    const fork = await context.runtime.engine.fork({ session: sessionId, ...at });
    const forked = {
      session: fork.sessionId,
      source: fork.source,
      ...(fork.step ? { step: fork.step } : {}),
    };
    if (body.message === undefined || provider === undefined) return c.json(forked, 201);
    const invocation = newInvocation(fork.sessionId);
    // The fork is durable whatever becomes of its turn: a refused turn is told beside it.
    const running = await context.runtime.engine
      .start(messageRun(context, invocation, provider, { ...body, message: body.message }), {
        durableStart: true,
      })
      .catch((error: unknown) => {
        if (RunError.isInstance(error)) return { refused: { code: error.code, message: error.message } };
        throw error;
      });
    if ('refused' in running) return c.json({ ...forked, ...running }, 201);
    context.registry.add(running);
    return c.json({ ...forked, invocation }, 201);
  });

  return app;
}
