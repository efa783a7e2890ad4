import type { Fact, Invocation } from '@factum/agent-facts';
import type { StoredEvent } from '@factum/event-log';
import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { type FactIdGenerator, spanIdOf, traceIdOf } from './fact-ids.js';

/** Attribute names: the OpenTelemetry GenAI semantic conventions, and Factum's own. */
export const ATTR = {
  operationName: 'gen_ai.operation.name',
  requestModel: 'gen_ai.request.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  finishReasons: 'gen_ai.response.finish_reasons',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  conversationId: 'gen_ai.conversation.id',
  agentName: 'gen_ai.agent.name',
  providerName: 'gen_ai.provider.name',
  errorType: 'error.type',
  operationId: 'factum.operation.id',
  invocationId: 'factum.invocation.id',
  runId: 'factum.run.id',
  turnId: 'factum.turn.id',
  stepId: 'factum.step.id',
  sequence: 'factum.sequence',
  outcome: 'factum.outcome',
} as const;

/** Span event names for what the log says went wrong or was repaired. */
export const EVENTS = {
  uncertain: 'factum.operation.uncertain',
  reconciled: 'factum.operation.reconciled',
  rejected: 'factum.tool.rejected',
  interrupted: 'factum.invocation.interrupted',
  approvalRequested: 'factum.approval.requested',
  approvalDecided: 'factum.approval.decided',
} as const;

const at = (stored: StoredEvent) => new Date(stored.event.timestamp);

/**
 * `gen_ai.provider.name` of a model request, from the wire it spoke (the first word of
 * its route identity): an OpenAI-compatible server is `openai`, as the conventions name
 * the API, whoever serves it.
 */
export function providerNameOf(routeIdentity: string): string {
  const kind = routeIdentity.split(' ')[0] ?? '';
  if (kind.startsWith('openai')) return 'openai';
  if (kind.startsWith('anthropic')) return 'anthropic';
  return kind === '' ? 'unknown' : kind;
}

/** Marks a span failed: the error status, and `error.type` (the fact's stable error code). */
function failed(span: Span, code: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
  span.setAttribute(ATTR.errorType, code);
}

function invocationSpanId(invocation: Invocation): string {
  return spanIdOf(`invocation\u0000${invocation.invocationId}`);
}

/** The context of an invocation's own span, for spans exported after it (recoveries). */
function invocationContext(invocation: Invocation): Context {
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: traceIdOf(invocation),
    spanId: invocationSpanId(invocation),
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
  });
}

type Open = { readonly span: Span; readonly context: Context };

/**
 * Turns one invocation's facts into spans, after the fact and with the log's own
 * times: the invocation as an `invoke_agent` span, each model step (requested →
 * completed) as a `chat` span, each tool call (dispatched → settled) as an
 * `execute_tool` span under it or under the code cell that made it. An operation left
 * without a settlement ends with the invocation and carries an `uncertain` event;
 * reconciliations and recovery's interruptions are events. Only facts after
 * `afterSequence` are exported when it is given (a recovery of an invocation whose
 * trace was exported before): they hang under the invocation's span by its id.
 */
export function traceInvocation(options: {
  readonly tracer: Tracer;
  readonly ids: FactIdGenerator;
  readonly events: readonly StoredEvent[];
  readonly afterSequence?: number;
}): number {
  const { tracer, ids } = options;
  const events = options.events.filter((stored) => stored.sequence > (options.afterSequence ?? 0));
  const first = events[0];
  if (first === undefined) return 0;
  const invocation = first.event.invocation;
  const common: Attributes = {
    [ATTR.conversationId]: invocation.sessionId,
    [ATTR.invocationId]: invocation.invocationId,
    [ATTR.runId]: invocation.runId,
    [ATTR.turnId]: invocation.turnId,
  };
  let root: Open | undefined;
  // The provider of the run's model requests: Required on the invoke_agent span too.
  const provider = options.events.find((stored) => stored.event.fact.kind === 'model_requested')?.event.fact;
  const providerName =
    provider?.kind === 'model_requested' ? providerNameOf(provider.routeIdentity) : undefined;
  const start = (
    name: string,
    stored: StoredEvent,
    key: string,
    parent: Context,
    attributes: Attributes,
    kind: SpanKind = SpanKind.INTERNAL,
  ): Open => {
    ids.next({ traceId: traceIdOf(invocation), spanId: spanIdOf(key) });
    const span = tracer.startSpan(
      name,
      { startTime: at(stored), kind, attributes: { ...common, ...attributes } },
      parent,
    );
    return { span, context: trace.setSpan(parent, span) };
  };
  if (first.event.fact.kind === 'invocation_opened') {
    ids.next({ traceId: traceIdOf(invocation), spanId: invocationSpanId(invocation) });
    const span = tracer.startSpan(
      'invoke_agent factum',
      {
        startTime: at(first),
        kind: SpanKind.INTERNAL,
        attributes: {
          ...common,
          [ATTR.operationName]: 'invoke_agent',
          [ATTR.agentName]: 'factum',
          ...(providerName === undefined ? {} : { [ATTR.providerName]: providerName }),
        },
      },
      ROOT_CONTEXT,
    );
    root = { span, context: trace.setSpan(ROOT_CONTEXT, span) };
  } else {
    // A later export (recovery): one span under the invocation's, by its derived id.
    root = start(
      'factum recover',
      first,
      `recover\u0000${first.event.id}`,
      invocationContext(invocation),
      {},
    );
  }
  const steps = new Map<string, Open>();
  const tools = new Map<string, Open>();
  let spans = 1;
  for (const stored of events) {
    const fact: Fact = stored.event.fact;
    switch (fact.kind) {
      case 'model_requested':
        steps.set(
          fact.stepId,
          // A request to a model server: a CLIENT span, as the conventions say.
          start(
            `chat ${fact.modelId}`,
            stored,
            stored.event.id,
            root.context,
            {
              [ATTR.operationName]: 'chat',
              [ATTR.providerName]: providerNameOf(fact.routeIdentity),
              [ATTR.requestModel]: fact.modelId,
              [ATTR.stepId]: fact.stepId,
              [ATTR.sequence]: stored.sequence,
            },
            SpanKind.CLIENT,
          ),
        );
        spans += 1;
        break;
      case 'model_completed': {
        const step = steps.get(fact.stepId);
        if (step === undefined) break;
        step.span.setAttributes({
          [ATTR.inputTokens]: fact.output.usage.inputTokens,
          [ATTR.outputTokens]: fact.output.usage.outputTokens,
          [ATTR.finishReasons]: [fact.output.finishReason],
        });
        step.span.end(at(stored));
        steps.delete(fact.stepId);
        break;
      }
      case 'tool_dispatched': {
        const origin = fact.call.origin;
        const parent = origin.kind === 'provider' ? root : (tools.get(origin.parentOperationId) ?? root);
        tools.set(
          fact.operationId,
          start(`execute_tool ${fact.call.name}`, stored, stored.event.id, parent.context, {
            [ATTR.operationName]: 'execute_tool',
            [ATTR.toolName]: fact.call.name,
            [ATTR.toolCallId]: fact.call.id,
            [ATTR.toolType]: 'function',
            [ATTR.operationId]: fact.operationId,
            [ATTR.sequence]: stored.sequence,
          }),
        );
        spans += 1;
        break;
      }
      case 'tool_settled': {
        const tool = tools.get(fact.operationId);
        if (tool === undefined) break;
        tool.span.setAttribute(ATTR.outcome, fact.outcome.kind);
        if (fact.outcome.kind === 'failed') failed(tool.span, fact.outcome.error.code);
        tool.span.end(at(stored));
        tools.delete(fact.operationId);
        break;
      }
      case 'tool_rejected':
        root.span.addEvent(
          EVENTS.rejected,
          {
            [ATTR.toolName]: fact.name,
            [ATTR.operationId]: fact.operationId,
            'factum.reason': fact.reason.kind,
          },
          at(stored),
        );
        break;
      case 'tool_reconciled':
        (tools.get(fact.operationId) ?? root).span.addEvent(
          EVENTS.reconciled,
          {
            [ATTR.operationId]: fact.operationId,
            'factum.policy': fact.policy,
            'factum.decision': fact.decision.kind,
          },
          at(stored),
        );
        break;
      case 'approval_requested':
        root.span.addEvent(
          EVENTS.approvalRequested,
          { [ATTR.toolName]: fact.call.name, [ATTR.operationId]: fact.operationId },
          at(stored),
        );
        break;
      case 'approval_decided':
        // Who decided is a person's name: only the decision is exported.
        root.span.addEvent(
          EVENTS.approvalDecided,
          { [ATTR.operationId]: fact.operationId, 'factum.decision': fact.decision },
          at(stored),
        );
        break;
      case 'invocation_ended': {
        const outcome = fact.outcome;
        const end = at(stored);
        for (const [operationId, tool] of tools) {
          // Dispatched, never settled: the effect may or may not have happened.
          tool.span.addEvent(EVENTS.uncertain, { [ATTR.operationId]: operationId }, end);
          tool.span.setAttribute(ATTR.outcome, 'uncertain');
          tool.span.end(end);
        }
        tools.clear();
        for (const step of steps.values()) {
          // A model step the invocation ended under without an answer failed with it.
          if (outcome.kind === 'failed') failed(step.span, outcome.error.code);
          step.span.end(end);
        }
        steps.clear();
        if (outcome.kind === 'failed' && outcome.error.code === 'interrupted')
          root.span.addEvent(EVENTS.interrupted, { 'factum.error.message': outcome.error.message }, end);
        root.span.setAttribute(ATTR.outcome, outcome.kind);
        if (outcome.kind === 'failed') failed(root.span, outcome.error.code);
        break;
      }
      default:
        break;
    }
  }
  // An invocation still open at export (a crashed one, exported by recovery) ends at its last fact.
  const last = at(events.at(-1)!);
  for (const [operationId, tool] of tools) {
    tool.span.addEvent(EVENTS.uncertain, { [ATTR.operationId]: operationId }, last);
    tool.span.setAttribute(ATTR.outcome, 'uncertain');
    tool.span.end(last);
  }
  for (const step of steps.values()) step.span.end(last);
  root.span.end(last);
  return spans;
}
