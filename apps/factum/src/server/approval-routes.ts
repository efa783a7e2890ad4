import type { Invocation } from '@factum/agent-facts';
import { Hono } from 'hono';
import { approvalEntryOf } from '../commands/approvals.js';
import { readJsonBody, readParam } from './read-request.js';
import { DecisionRequestSchema, IdSchema, ResolutionRequestSchema } from './request-schemas.js';
import type { RouteContext } from './route-context.js';
import { ServerError } from './server-error.js';
import { resolveProvider } from './turn-routes.js';

const BOUNDS = { maxEvents: 100_000, maxBytes: 64 * 1024 * 1024 };

/**
 * People's decisions over HTTP:
 * - `GET /approvals` lists every call waiting for a person, across sessions (and decided
 *   ones whose run has not been continued);
 * - `POST /operations/:id/decision` `{ decision: 'approve'|'deny', note?, inputDigest? }`
 *   records one, then — once every call of that run is decided — continues the run on
 *   this server (`continuation` in the answer);
 * - `POST /operations/:id/resolution` `{ outcome, result?, note }` resolves an uncertain
 *   operation by hand.
 * Refusals are typed (409 for a decision taken twice, an operation already run, an
 * input that differs, an operation that is not uncertain) and write nothing.
 */
export function approvalRoutes(context: RouteContext): Hono {
  const app = new Hono();
  const { engine } = context.runtime;

  app.get('/approvals', async (c) => {
    const approvals = await engine.pendingApprovals();
    return c.json({ approvals: approvals.map(approvalEntryOf) });
  });

  app.post('/operations/:id/decision', async (c) => {
    const operationId = readParam(c, 'id', IdSchema);
    const body = await readJsonBody(c, DecisionRequestSchema);
    if (context.closing.aborted)
      throw new ServerError('shutting_down', 'the server is closing; decide later');
    const listed = (await engine.pendingApprovals()).find((a) => a.operationId === operationId);
    const inputDigest = body.inputDigest ?? listed?.inputDigest;
    const decision = await engine.decide(operationId, {
      decision: body.decision,
      by: context.operator,
      ...(body.note === undefined ? {} : { note: body.note }),
      ...(inputDigest === undefined ? {} : { inputDigest }),
      ...(listed === undefined ? {} : { sessionId: listed.invocation.sessionId }),
    });
    const continuation = await continueIfDecided(context, decision.invocation);
    return c.json({ operationId, decision, continuation });
  });

  app.post('/operations/:id/resolution', async (c) => {
    const operationId = readParam(c, 'id', IdSchema);
    const body = await readJsonBody(c, ResolutionRequestSchema);
    const resolution = await engine.resolve(operationId, {
      outcome: body.outcome,
      by: context.operator,
      note: body.note,
      ...(body.result === undefined ? {} : { result: body.result }),
    });
    return c.json({ operationId, resolution: resolution ?? null });
  });

  return app;
}

/**
 * Starts the continuation of a parked run once none of its calls waits, unless it was
 * already continued (by another request, process or host). A run that cannot start
 * (no provider here, a busy session) leaves the decision recorded: `factum resume`
 * or a later decision's request continues it.
 */
async function continueIfDecided(
  context: RouteContext,
  parked: Invocation,
): Promise<{ invocation: Invocation } | { refused: string } | null> {
  const { runtime } = context;
  // Undefined once a continuation has carried the calls out (here or on another host).
  const view = await runtime.engine.parkedRun(parked.sessionId);
  if (view === undefined || !view.ready || view.invocation.invocationId !== parked.invocationId) return null;
  const opened = (await runtime.log.invocationEvents(parked, BOUNDS)).find(
    (stored) => stored.event.fact.kind === 'invocation_opened',
  )?.event.fact;
  const toolMode =
    opened?.kind === 'invocation_opened' ? (opened.configuration?.toolMode ?? 'direct') : 'direct';
  const invocation: Invocation = { ...parked, invocationId: `invocation-${crypto.randomUUID().slice(0, 8)}` };
  try {
    const running = await runtime.engine.start(
      {
        invocation,
        provider: resolveProvider(context),
        configuration: { cwd: context.cwd, toolMode },
        ...(context.instructions === undefined ? {} : { instructions: context.instructions }),
        work: {
          kind: 'continuation',
          source: view.source,
          tools: context.tools(),
          requireApproval: context.requireApproval,
        },
      },
      { durableStart: true },
    );
    context.registry.add(running);
    return { invocation };
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? String(error.code) : 'internal';
    return { refused: code };
  }
}
