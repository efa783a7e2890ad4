import type { ModelStep, ModelUsage } from '@factum/agent-facts';
import type { EventLog } from '@factum/event-log';
import { type ModelExecutor, type ModelRequest, requestDigest, routeIdentity } from '@factum/model';
import { projectMessages } from './context-projection.js';
import type { InvocationWriter } from './invocation-writer.js';
import type { RunInput } from './run-input.js';

/** Bounds of the session history a prompt may be built from. */
export type ContextBounds = { readonly maxEvents: number; readonly maxBytes: number };

/** Observers of a run as it streams (a terminal, a web timeline). */
export type RunObserver = {
  readonly onObservation?: (
    stepId: string,
    observation: import('@factum/agent-facts').ModelObservation,
  ) => void;
};

/**
 * One model step: builds the prompt from the session's facts, records
 * `model_requested` with the prefix it was built from, records every streamed
 * observation as `model_observed` (in order, without waiting on each fsync), and
 * records `model_completed` once every observation is durable.
 */
export async function modelTurn(options: {
  readonly log: EventLog;
  readonly models: ModelExecutor;
  readonly writer: InvocationWriter;
  readonly input: RunInput;
  readonly stepId: string;
  readonly tools: ModelRequest['tools'];
  readonly bounds: ContextBounds;
  readonly signal: AbortSignal;
  readonly observer?: RunObserver;
}): Promise<ModelStep> {
  const { log, input, stepId, writer } = options;
  const sessionId = input.invocation.sessionId;
  const prefix = await log.scopedPrefix({ session: sessionId }, options.bounds);
  const history = await projectMessages(prefix.events, input.invocation.invocationId, async (eventId) =>
    (await log.resolveToolResult(sessionId, eventId)).json(),
  );
  const request: ModelRequest = {
    messages: input.instructions ? [{ role: 'system', content: input.instructions }, ...history] : history,
    tools: options.tools,
    ...(input.providerOptions ? { providerOptions: input.providerOptions } : {}),
    ...(input.mainOutputLimit === undefined ? {} : { maxOutputTokens: input.mainOutputLimit }),
  };
  await writer.write({
    kind: 'model_requested',
    stepId,
    modelId: input.provider.model,
    purpose: 'main',
    source: { scope: prefix.scope, highWater: prefix.highWater, digest: prefix.digest },
    inputDigest: requestDigest(input.provider, request),
    routeIdentity: routeIdentity(input.provider),
  });
  const stream = options.models.stream(request, { provider: input.provider, signal: options.signal });
  const observed: Promise<number>[] = [];
  try {
    for await (const observation of stream) {
      options.observer?.onObservation?.(stepId, observation);
      const write = writer.write({ kind: 'model_observed', stepId, observation });
      // Awaited once the stream ends; until then a refused write (the run fenced or sealed
      // under it) must not surface as an unhandled rejection that ends the process.
      write.catch(() => undefined);
      observed.push(write);
    }
  } finally {
    // Every observation that was sent to the log settles before the step goes on.
    await Promise.allSettled(observed);
  }
  await Promise.all(observed);
  const step = await stream.step();
  await writer.write({ kind: 'model_completed', stepId, output: step });
  return step;
}

/** Adds one step's usage to a running total. */
export function addUsage(total: ModelUsage, step: ModelUsage): ModelUsage {
  return {
    inputTokens: total.inputTokens + step.inputTokens,
    outputTokens: total.outputTokens + step.outputTokens,
    totalTokens: total.totalTokens + step.totalTokens,
  };
}
