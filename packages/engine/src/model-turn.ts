import type { ModelObservation, ModelStep, ModelUsage } from '@factum/agent-facts';
import type { EventLog } from '@factum/event-log';
import { type ModelExecutor, type ModelRequest, routeIdentity } from '@factum/model';
import type { InvocationWriter } from './invocation-writer.js';
import type { RunInput } from './run-input.js';
import type { SessionProjection } from './session-projection.js';

/** Bounds of the session history a prompt may be built from. */
export type ContextBounds = { readonly maxEvents: number; readonly maxBytes: number };

/** Observers of a run as it streams (a terminal, a web timeline). */
export type RunObserver = {
  /** Each observation as it streams, before it is durable: a preview, never a result. */
  readonly onObservation?: (stepId: string, observation: ModelObservation) => void;
};

/**
 * One model step: builds the prompt from the session's facts (the in-memory projection,
 * checked against the log's head), then records `model_requested` with the prefix it was
 * built from, the streamed observations as `model_observed` (a piece of the stream each,
 * see `InvocationWriter.observe`), and `model_completed` —
 * none of them waited for: they are deferred and become durable together with the next
 * fact the run must wait for (the step's first T1 or rejection, or the invocation's end).
 */
export async function modelTurn(options: {
  readonly log: EventLog;
  readonly models: ModelExecutor;
  readonly writer: InvocationWriter;
  readonly projection: SessionProjection;
  readonly input: RunInput;
  readonly stepId: string;
  readonly tools: ModelRequest['tools'];
  readonly bounds: ContextBounds;
  readonly signal: AbortSignal;
  readonly observer?: RunObserver;
}): Promise<ModelStep> {
  const { log, input, stepId, writer } = options;
  // The prompt stands on the durable prefix it names as its source (normally nothing is
  // deferred here), and on the run's own opening while that rides along: it commits in
  // the same transaction as this step, so a reopen that shows the step shows it too.
  await writer.flush();
  const { projection } = options;
  const view = await projection.view(log, options.bounds, { take: true });
  const opening = writer.pendingOpening();
  // The opening commits only if the session still ends where this prompt's history does.
  if (opening !== undefined) writer.openOn(view);
  const pending = opening === undefined ? undefined : { sequence: view.highWater + 1, event: opening };
  const messages = await projection.prompt(view, input.invocation.invocationId, input.instructions, pending);
  const request: ModelRequest = {
    messages,
    tools: options.tools,
    ...(input.providerOptions ? { providerOptions: input.providerOptions } : {}),
    ...(input.mainOutputLimit === undefined ? {} : { maxOutputTokens: input.mainOutputLimit }),
  };
  const inputDigest = projection.digest(input.provider, request);
  // The text that digest was taken of: sent as it is, so a request costs what it adds to
  // the conversation, not its whole length again, and the bytes sent are the digested ones.
  const body = projection.requestBody();
  writer.deferFact({
    kind: 'model_requested',
    stepId,
    modelId: input.provider.model,
    purpose: 'main',
    source: { scope: view.scope, highWater: view.highWater, digest: view.digest },
    inputDigest,
    routeIdentity: routeIdentity(input.provider),
  });
  const stream = options.models.stream(request, {
    provider: input.provider,
    signal: options.signal,
    ...(body === undefined ? {} : { body }),
  });
  for await (const observation of stream) {
    options.observer?.onObservation?.(stepId, observation);
    writer.observe(stepId, observation);
  }
  const step = await stream.step();
  // An eager writer's completion follows every observation durably, as before.
  await writer.confirmEager();
  writer.deferFact({ kind: 'model_completed', stepId, output: step });
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
