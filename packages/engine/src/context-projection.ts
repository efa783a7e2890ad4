import {
  type Fact,
  type FactOf,
  type ModelPart,
  type RuntimeEvent,
  stepToolCalls,
} from '@factum/agent-facts';
import type { ModelMessage, ModelToolOutcome } from '@factum/model';
import { renderToolResult } from '@factum/tools';

/** An event of the session's prefix, in log order. */
export type SessionEvent = { readonly sequence: number; readonly event: RuntimeEvent };

/** Reads a stored tool result by the id of the event that settled it. */
export type ResultReader = (eventId: string) => Promise<unknown>;

/** One invocation's part of a history, cut at `upTo` when a boundary ends it early. */
type Segment = { readonly invocationId: string; readonly upTo: number };

const UNKNOWN_OUTCOME =
  'the outcome is unknown: the call was dispatched but its result was never recorded; it may or may not have taken effect';

const NOT_RUN = 'did not run: a person recorded that this call never took effect';

/**
 * The history an invocation stands on: the invocations it descends from, oldest first,
 * then itself. A message run follows the invocation opened just before it in the
 * session; a continuation or a handoff follows its source boundary — so branches the
 * run does not descend from stay out of its prompt.
 */
export function lineage(events: readonly SessionEvent[], invocationId: string): Segment[] {
  // Each opening with the one opened just before it in the session: a message run's
  // parent, found without searching the session once per ancestor.
  const opened = new Map<string, { fact: FactOf<'invocation_opened'>; previous: string | undefined }>();
  let last: string | undefined;
  for (const { event } of events) {
    if (event.fact.kind !== 'invocation_opened') continue;
    opened.set(event.invocation.invocationId, { fact: event.fact, previous: last });
    last = event.invocation.invocationId;
  }
  const segments: Segment[] = [];
  const seen = new Set<string>();
  let current: Segment | undefined = { invocationId, upTo: Number.POSITIVE_INFINITY };
  while (current !== undefined && !seen.has(current.invocationId)) {
    seen.add(current.invocationId);
    segments.push(current);
    const entry = opened.get(current.invocationId);
    if (entry === undefined) break;
    const input = entry.fact.input;
    if (input.kind === 'message') {
      current =
        entry.previous === undefined
          ? undefined
          : { invocationId: entry.previous, upTo: Number.POSITIVE_INFINITY };
    } else {
      current = { invocationId: input.source.invocation.invocationId, upTo: input.source.highWater };
    }
  }
  return segments.reverse();
}

/**
 * The conversation a model request carries, projected from the log alone: each user
 * message, each assistant step, and right after it one tool message per call the step
 * made — its result (bounded by `renderToolResult`), its failure, the sentence of its rejection, or that its outcome
 * is unknown. Nothing comes from memory, so a reopened log gives the same prompt.
 */
export async function projectMessages(
  events: readonly SessionEvent[],
  invocationId: string,
  readResult: ResultReader,
): Promise<ModelMessage[]> {
  const segments = lineage(events, invocationId);
  const byInvocation = new Map<string, SessionEvent[]>();
  for (const stored of events) {
    const id = stored.event.invocation.invocationId;
    const list = byInvocation.get(id) ?? [];
    if (list.length === 0) byInvocation.set(id, list);
    list.push(stored);
  }
  // Operation ids are unique in a session; a call parked on approval is carried out by
  // the continuation that follows, in its own invocation — so outcomes are looked up by
  // operation across the session, not only in the invocation that made the call.
  const outcomes = outcomesOf(events);
  const messages: ModelMessage[] = [];
  for (const segment of segments) {
    const own = byInvocation.get(segment.invocationId) ?? [];
    for (const message of await segmentMessages(own, segment.upTo, (id) => outcomes.get(id), readResult)) {
      messages.push(message);
    }
  }
  return messages;
}

/**
 * The messages one invocation's events give, up to `upTo`: its user message, each step
 * the model answered, and after a step one tool message per call it made.
 */
export async function segmentMessages(
  events: readonly SessionEvent[],
  upTo: number,
  outcomeOf: (operationId: string) => Recorded | undefined,
  readResult: ResultReader,
): Promise<ModelMessage[]> {
  const messages: ModelMessage[] = [];
  for (const { sequence, event } of events) {
    if (sequence > upTo) break;
    const fact = event.fact;
    if (fact.kind === 'invocation_opened' && fact.input.kind === 'message') {
      messages.push({ role: 'user', content: fact.input.content });
    }
    if (fact.kind === 'model_completed' && fact.output.parts.length > 0) {
      messages.push({ role: 'assistant', parts: fact.output.parts });
      for (const { operationId, call } of stepToolCalls(fact.stepId, fact.output.parts)) {
        const result = await toolOutcome(outcomeOf(operationId), readResult);
        messages.push({ role: 'tool', callId: call.id, name: call.name, result });
      }
    }
  }
  return messages;
}

type Closing = FactOf<'tool_settled'> | FactOf<'tool_rejected'> | FactOf<'tool_reconciled'>;

/** What the log says of one operation so far: whether it was dispatched, and what closed it. */
export type Recorded = {
  readonly dispatched: boolean;
  readonly closing?: { readonly fact: Closing; readonly eventId: string };
};

function outcomesOf(events: readonly SessionEvent[]): Map<string, Recorded> {
  const outcomes = new Map<string, Recorded>();
  for (const { event } of events) {
    const change = outcomeChange(event, (id) => outcomes.get(id));
    if (change !== undefined) outcomes.set(change.operationId, change.recorded);
  }
  return outcomes;
}

/**
 * What `event` changes in the record of its operation, if it is a dispatch or a closing
 * (a reconciliation that leaves the outcome unknown closes nothing). The record is new,
 * never the old one changed.
 */
export function outcomeChange(
  event: RuntimeEvent,
  recordOf: (operationId: string) => Recorded | undefined,
): { readonly operationId: string; readonly recorded: Recorded } | undefined {
  const fact: Fact = event.fact;
  const closed = (closing: Closing) => {
    const before = recordOf(closing.operationId) ?? { dispatched: false };
    return {
      operationId: closing.operationId,
      recorded: { ...before, closing: { fact: closing, eventId: event.id } },
    };
  };
  switch (fact.kind) {
    case 'tool_dispatched': {
      const before = recordOf(fact.operationId);
      return { operationId: fact.operationId, recorded: { ...before, dispatched: true } };
    }
    case 'tool_settled':
    case 'tool_rejected':
      return closed(fact);
    case 'tool_reconciled':
      return fact.decision.kind === 'unknown' ? undefined : closed(fact);
    default:
      return undefined;
  }
}

async function toolOutcome(
  recorded: Recorded | undefined,
  readResult: ResultReader,
): Promise<ModelToolOutcome> {
  if (recorded?.closing === undefined) {
    return recorded?.dispatched
      ? { kind: 'error', message: UNKNOWN_OUTCOME }
      : { kind: 'rejected', rejection: { kind: 'interrupted' } };
  }
  const { fact, eventId } = recorded.closing;
  switch (fact.kind) {
    case 'tool_rejected':
      return { kind: 'rejected', rejection: fact.reason };
    case 'tool_settled':
      return fact.outcome.kind === 'succeeded'
        ? { kind: 'text', text: renderToolResult(await readResult(eventId)) }
        : { kind: 'error', message: `${fact.outcome.error.code}: ${fact.outcome.error.message}` };
    case 'tool_reconciled':
      if (fact.decision.kind === 'succeeded')
        return { kind: 'text', text: renderToolResult(await readResult(eventId)) };
      if (fact.decision.kind === 'not_run') {
        return { kind: 'error', message: `${NOT_RUN}${fact.note === undefined ? '' : `: ${fact.note}`}` };
      }
      return fact.decision.kind === 'failed'
        ? { kind: 'error', message: `${fact.decision.error.code}: ${fact.decision.error.message}` }
        : { kind: 'error', message: UNKNOWN_OUTCOME };
    default:
      return fact satisfies never;
  }
}

/** The tool calls of a step, in the order the model gave them. */
export function toolCallsOf(parts: readonly ModelPart[]) {
  return parts.flatMap((part) => (part.kind === 'tool_call' ? [part.call] : []));
}
