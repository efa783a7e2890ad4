import { FactumError, type Invocation } from '@factum/agent-facts';
import type { RunInput } from '@factum/engine';
import type { ProviderConfig } from '@factum/model';
import { Hono } from 'hono';
import { newInvocation } from '../new-invocation.js';
import { readIdempotencyKey, replayed, requestFingerprint } from './idempotency-key.js';
import { readJsonBody, readParam } from './read-request.js';
import { EmptyRequestSchema, IdSchema, type TurnRequest, TurnRequestSchema } from './request-schemas.js';
import { liveInvocation, type RouteContext } from './route-context.js';
import { ServerError } from './server-error.js';

/**
 * `POST /sessions/:session/turns` starts a turn (202 once `invocation_opened` is
 * durable); `POST /invocations/:id/cancel` cancels a live one. A turn belongs to the
 * server, not to the request: it runs on when the client disconnects.
 *
 * With an `Idempotency-Key` header the turn is started at most once per session: a
 * retry with the key gets the first submission's `invocation` (202 while it runs, 200
 * with its `outcome` once it has ended, both marked `Idempotent-Replayed: true`); the
 * key with another body is a 409 `idempotency_conflict`, with nothing written.
 */
export function turnRoutes(context: RouteContext): Hono {
  const app = new Hono();

  app.post('/sessions/:session/turns', async (c) => {
    const sessionId = readParam(c, 'session', IdSchema);
    const key = readIdempotencyKey(c);
    const body = await readJsonBody(c, TurnRequestSchema);
    if (context.closing.aborted)
      throw new ServerError('shutting_down', 'the server is closing; start the turn later');
    const provider = resolveProvider(context);
    const invocation = newInvocation(sessionId);
    // No signal: a client that goes away must not cancel the run it started. The 202
    // tells the client the run exists, so it waits for the opening to be durable.
    const running = await context.runtime.engine.start(
      {
        ...messageRun(context, invocation, provider, body),
        ...(key === undefined ? {} : { requestFingerprint: requestFingerprint(body) }),
      },
      { durableStart: true, ...(key === undefined ? {} : { idempotencyKey: key }) },
    );
    if (running.resubmitted) return replayed(c, running);
    context.registry.add(running);
    return c.json({ invocation }, 202);
  });

  app.post('/invocations/:id/cancel', async (c) => {
    const id = readParam(c, 'id', IdSchema);
    await readJsonBody(c, EmptyRequestSchema);
    const live = await liveInvocation(context, id);
    live.cancel();
    return c.json({ invocation: live.invocation, cancelling: true }, 202);
  });

  return app;
}

/** A message run of the server's agent: `POST …/turns`, and a fork's first turn. */
export function messageRun(
  context: RouteContext,
  invocation: Invocation,
  provider: ProviderConfig,
  body: TurnRequest,
): RunInput {
  return {
    invocation,
    provider,
    configuration: { cwd: context.cwd, toolMode: body.toolMode ?? 'direct' },
    ...(context.instructions === undefined ? {} : { instructions: context.instructions }),
    work: {
      kind: 'message',
      message: body.message,
      tools: context.tools(),
      requireApproval: context.requireApproval,
      ...(body.allowPriorUnknown === undefined ? {} : { allowPriorUnknown: body.allowPriorUnknown }),
    },
  };
}

/** The provider of a new run, or the 503 that says how to configure one. */
export function resolveProvider(context: RouteContext): ProviderConfig {
  try {
    return context.provider();
  } catch (error) {
    // Settings errors say which flag or variable to set; they never carry the key.
    const message = FactumError.isInstance(error) ? error.message : 'the model provider is not configured';
    throw new ServerError('no_provider', message, { cause: error });
  }
}
