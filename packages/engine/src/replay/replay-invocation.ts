import {
  type Fact,
  type FactOf,
  type InvocationOutcome,
  type ModelStep,
  RuntimeEvent,
  ToolError,
} from '@factum/agent-facts';
import {
  ModelError,
  type ModelMessage,
  type ModelRequest,
  type ProviderConfig,
  type RequestDigester,
  routeIdentity,
} from '@factum/model';
import { type CapturedTools, RunTools } from '@factum/tools';
import { classify } from '../agent-loop.js';
import { type ResultReader, type SessionEvent, toolCallsOf } from '../context-projection.js';
import { outcomeOfFinalStep } from '../final-step.js';
import { joined } from '../message-lists.js';
import type { MessageProjection } from '../message-projection.js';
import { parkedRunOf } from '../parked-run.js';
import { isDerivedEnd } from './compare-replay.js';
import { RecordedCalls, recordedCalls } from './recorded-calls.js';
import type { InvocationSetup } from './replay-setup.js';
import { ScratchSink } from './scratch-sink.js';

/** One recorded invocation and the session history before its opening. */
export type RecordedInvocation = {
  /** The history before the opening, a fork's inherited prefix first (made when asked). */
  readonly prefix: () => readonly SessionEvent[];
  /** The invocation's own events, its opening first. */
  readonly events: readonly SessionEvent[];
  /** The session's prompts up to the opening, which this invocation's are layered on. */
  readonly projection: MessageProjection;
  /** Reads a recorded result of the history, by the id of the event that settled it. */
  readonly readRecorded: ResultReader;
  /** Digests the session's requests, each in the time of what it adds. */
  readonly digester: RequestDigester;
  /** What each request begins with for these instructions: one frozen list, so every prompt begins alike. */
  readonly lead: (instructions: string | undefined) => readonly ModelMessage[];
};

/** What replaying one invocation produced. */
export type ReplayRun = {
  /** The facts the replay produced after the opening, in order. */
  readonly facts: readonly Fact[];
  /** The answer of each step the replay made, with its model time when timed. */
  readonly steps: readonly { readonly stepId: string; readonly step: ModelStep; readonly ms?: number }[];
  readonly calls: RecordedCalls;
  /** True when the replay took the recorded end as is (an end from outside the run). */
  readonly recordedEnd: boolean;
  /** Everything the scratch sink holds for this invocation, its opening first. */
  readonly events: readonly SessionEvent[];
};

/** Why the loop stopped before an end of its own. */
type Stop = { readonly kind: 'no_answer' } | { readonly kind: 'uncertain' } | { readonly kind: 'diverged' };

/**
 * Replays one invocation as the engine runs it: each step's request is built by the
 * current prompt projection from the session's history and digested for the provider;
 * the answer is the recorded one (`verify`) or the new model's (`model`); the step's
 * calls go through the tools layer (schemas, approvals, Code mode cells) into a scratch
 * sink, with recorded outcomes served in place of the tools; then the end the loop
 * derives. `check` is asked after every step and stops the run when it says so.
 */
export async function replayInvocation(
  setup: InvocationSetup,
  recorded: RecordedInvocation,
  check: (facts: readonly Fact[]) => boolean,
): Promise<ReplayRun> {
  const opening = recorded.events[0]!;
  const invocation = opening.event.invocation;
  const openingFact = opening.event.fact;
  if (openingFact.kind !== 'invocation_opened') throw new Error('an invocation starts with its opening');
  const calls = new RecordedCalls(recordedCalls(recorded.events.map((stored) => stored.event)), (eventId) =>
    setup.readSource(invocation.sessionId, eventId),
  );
  setup.served.current = calls;
  const time = new Date(opening.event.timestamp);
  let counter = 0;
  // Deterministic ids and one time: the same replay gives the same facts, byte for byte.
  const nextId = () => {
    counter += 1;
    return `replay-${invocation.invocationId}-${counter}`;
  };
  // A verify replay compares every fact with a recorded one the log parsed, and parses
  // only one that differs (`ReplayComparison`); a new model's facts are parsed at once.
  const parse = setup.mode === 'verify' ? ('later' as const) : ('now' as const);
  const origin = { id: nextId, now: () => time, parse };
  const scratch = new ScratchSink(opening.sequence, () => time.getTime());
  scratch.push(opening.event);
  const produced = () => scratch.events.slice(1).map((stored) => stored.event.fact);
  const emit = (fact: Fact) => scratch.push(RuntimeEvent.create(invocation, fact, origin));
  const configuration = openingFact.configuration ?? { cwd: '.', toolMode: 'direct' as const };
  const tools = new RunTools({
    sink: scratch,
    invocation,
    catalog: setup.catalog,
    mode: configuration.toolMode,
    code: setup.code,
    options: { origin },
    ...(setup.agent.approvals === undefined ? {} : { approval: setup.agent.approvals }),
  });
  const captured = await tools.capture(configuration.cwd);
  const answers = setup.mode === 'verify' ? recordedAnswers(recorded.events) : undefined;
  const requests = recordedRequests(recorded.events);
  const steps: { stepId: string; step: ModelStep; ms?: number }[] = [];
  // Each result once as JSON: every later step's prompt renders it again.
  const ownResults = new Map<string, unknown>();
  const readResult = async (eventId: string) => {
    if (ownResults.has(eventId)) return ownResults.get(eventId);
    const own = scratch.result(eventId);
    if (own === undefined) return recorded.readRecorded(eventId);
    const json = own.json();
    ownResults.set(eventId, json);
    return json;
  };
  // The prompts: the recorded history's, with what this replay writes layered on top.
  const view = recorded.projection.layer(readResult);
  let projected = 0;
  const lead = recorded.lead(setup.agent.instructions);
  const history = () => {
    for (; projected < scratch.events.length; projected += 1) view.ingest(scratch.events[projected]!);
    return view.parts(invocation.invocationId, lead);
  };

  let lastStep = '';
  const loop = async (): Promise<InvocationOutcome | Stop> => {
    if (openingFact.input.kind === 'continuation') {
      const stop = await continueParked(
        captured,
        recorded.prefix(),
        openingFact.input.source.invocation.invocationId,
        setup.signal,
      );
      if (stop !== undefined) return stop;
      if (!check(produced())) return { kind: 'diverged' };
    }
    for (let n = 1; ; n += 1) {
      lastStep = `${invocation.invocationId}/${n}`;
      if (n > setup.maxSteps) {
        const message = `the run reached its limit of ${setup.maxSteps} model steps`;
        return { kind: 'failed', error: { code: 'step_limit', message } };
      }
      const stepId = `${invocation.invocationId}/${n}`;
      const parts = await history();
      const { agent } = setup;
      const provider = providerOf(setup, requests.get(stepId));
      const request: Omit<ModelRequest, 'messages'> = {
        tools: captured.specs,
        ...(agent.providerOptions ? { providerOptions: agent.providerOptions } : {}),
        ...(agent.mainOutputLimit === undefined ? {} : { maxOutputTokens: agent.mainOutputLimit }),
      };
      emit({
        kind: 'model_requested',
        stepId,
        modelId: provider.model,
        purpose: 'main',
        // Where the prompt stood in the log is not compared (a scratch sink keeps no chain):
        // the recorded request's, or for a step the recording lacks, the scratch position.
        source: requests.get(stepId)?.source ?? {
          scope: { kind: 'session', id: invocation.sessionId },
          highWater: scratch.events.at(-1)!.sequence,
          digest: '',
        },
        inputDigest: recorded.digester.digestParts(provider, request, parts),
        routeIdentity: routeIdentity(provider),
      });
      let step: ModelStep;
      let ms: number | undefined;
      if (answers !== undefined) {
        const answer = answers.get(stepId);
        if (answer === undefined) return { kind: 'no_answer' };
        step = answer;
      } else {
        const started = setup.now?.();
        try {
          const messages = joined(parts);
          const stream = setup.models.stream({ ...request, messages }, { provider, signal: setup.signal });
          for await (const _ of stream) {
            // The observations are the answer's stream; the replay keeps only the answer.
          }
          step = await stream.step();
        } catch (error) {
          // As the engine does: a model that fails ends the run failed, and the report says so.
          if (setup.signal.aborted || !ModelError.isInstance(error)) throw error;
          return { kind: 'failed', error: classify(error) };
        }
        if (started !== undefined) ms = setup.now!() - started;
      }
      emit({ kind: 'model_completed', stepId, output: step });
      steps.push({ stepId, step, ...(ms === undefined ? {} : { ms }) });
      if (!check(produced())) return { kind: 'diverged' };
      const toolCalls = toolCallsOf(step.parts);
      if (toolCalls.length === 0) return outcomeOfFinalStep(step);
      const stepTools = captured.intoStep(stepId);
      const unmatched = calls.unmatched.length;
      for (const call of toolCalls) {
        try {
          await stepTools.invoke(call, setup.signal);
        } catch (error) {
          if (ToolError.isInstance(error) && error.code === 'outcome_unknown') return { kind: 'uncertain' };
        }
      }
      if (!check(produced())) return { kind: 'diverged' };
      if (setup.onNewCall === 'stop' && calls.unmatched.length > unmatched) {
        return {
          kind: 'failed',
          error: { code: 'replay_new_call', message: 'the model made a call the recording does not hold' },
        };
      }
      const [first, ...rest] = stepTools.awaitingApproval;
      if (first !== undefined) return { kind: 'approval_pending', operations: [first, ...rest] };
    }
  };

  const ending = await loop();
  await tools.shutdown().catch(() => undefined);
  let recordedEnd = false;
  if (ending.kind === 'diverged') {
    // Stopped at the first divergence: nothing after it is compared.
  } else if (ending.kind === 'no_answer' || ending.kind === 'uncertain') {
    // The recording goes no further (a crash, a cancel, a handoff): its end came from
    // outside the run and is taken as recorded — unless the loop would have derived it.
    const end = recordedEndOf(recorded.events);
    if (end !== undefined && !isDerivedEnd(end)) {
      if (ending.kind === 'no_answer' && !requests.has(lastStep)) scratch.events.pop();
      emit({ kind: 'invocation_ended', outcome: end });
      recordedEnd = true;
    }
  } else {
    emit({ kind: 'invocation_ended', outcome: ending });
  }
  return { facts: produced(), steps, calls, recordedEnd, events: scratch.events };
}

/** A continuation first carries out the decisions on its source's parked calls. */
async function continueParked(
  captured: CapturedTools,
  prefix: readonly SessionEvent[],
  sourceId: string,
  signal: AbortSignal,
): Promise<Stop | undefined> {
  const parked = parkedRunOf(prefix, sourceId);
  for (const operation of parked?.operations ?? []) {
    if (operation.state !== 'waiting' || operation.decision === undefined) continue;
    const { decision } = operation;
    try {
      if (decision.decision === 'approved') {
        await captured.dispatchApproved(operation.operationId, operation.call, signal);
      } else {
        const reason =
          decision.decision === 'denied'
            ? { kind: 'denied' as const, ...(decision.note === undefined ? {} : { note: decision.note }) }
            : { kind: 'expired' as const };
        await captured.rejectParked(operation.operationId, operation.call, reason);
      }
    } catch (error) {
      if (ToolError.isInstance(error) && error.code === 'outcome_unknown') return { kind: 'uncertain' };
    }
  }
  return undefined;
}

function recordedRequests(events: readonly SessionEvent[]): Map<string, FactOf<'model_requested'>> {
  const requests = new Map<string, FactOf<'model_requested'>>();
  for (const { event } of events) {
    if (event.fact.kind === 'model_requested') requests.set(event.fact.stepId, event.fact);
  }
  return requests;
}

/** The routes of each agent's provider, one object per route so a digester keeps its frame. */
const routes = new WeakMap<ProviderConfig, Map<string, ProviderConfig>>();

/** The provider a step is digested for: the agent's, or on the recorded route when asked. */
function providerOf(setup: InvocationSetup, recorded: FactOf<'model_requested'> | undefined): ProviderConfig {
  const provider = setup.agent.provider;
  if (setup.route !== 'recorded' || recorded === undefined) return provider;
  const [kind, baseUrl, ...model] = recorded.routeIdentity.split(' ');
  const kinds: readonly string[] = ['openai_chat_completions', 'openai_responses', 'anthropic_messages'];
  if (kind === undefined || baseUrl === undefined || !kinds.includes(kind)) return provider;
  const known = routes.get(provider) ?? new Map<string, ProviderConfig>();
  routes.set(provider, known);
  const key = `${recorded.routeIdentity}\u0000${recorded.modelId}`;
  let route = known.get(key);
  if (route === undefined) {
    route = {
      ...provider,
      kind: kind as ProviderConfig['kind'],
      baseUrl,
      model: model.join(' ') || recorded.modelId,
    };
    known.set(key, route);
  }
  return route;
}

function recordedAnswers(events: readonly SessionEvent[]): Map<string, ModelStep> {
  const answers = new Map<string, ModelStep>();
  for (const { event } of events) {
    if (event.fact.kind === 'model_completed') answers.set(event.fact.stepId, event.fact.output);
  }
  return answers;
}

/** The recorded end of an invocation, if it has one. */
export function recordedEndOf(events: readonly SessionEvent[]): InvocationOutcome | undefined {
  for (const { event } of events) if (event.fact.kind === 'invocation_ended') return event.fact.outcome;
  return undefined;
}
