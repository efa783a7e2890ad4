import type {
  Fact,
  FactOf,
  Invocation,
  InvocationOutcome,
  ReconciliationDecision,
  RuntimeEvent,
  ToolOutcome,
} from '@factum/agent-facts';

/** One fact as the API and the live stream deliver it. */
export type StoredFact = { readonly sequence: number; readonly event: RuntimeEvent };

/** How an invocation section stands: open, or how it ended. */
/** `forked`: the section of a fork's first fact, which opens no invocation. */
export type SectionStatus =
  | 'open'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'paused'
  | 'awaiting_approval'
  | 'forked';

/** The model's streamed observations of one step, gathered into one row. */
export type StreamRow = {
  readonly kind: 'stream';
  readonly stepId: string;
  readonly sequence: number;
  readonly timestamp: string;
  last: number;
  text: string;
  reasoning: string;
  toolDeltas: number;
  done: boolean;
};

/** A dispatch (T1) with everything that joins it: its settlement, notes, reconciliation. */
export type OperationRow = {
  readonly kind: 'operation';
  readonly sequence: number;
  readonly timestamp: string;
  readonly fact: FactOf<'tool_dispatched'>;
  readonly invocationId: string;
  settled: { readonly sequence: number; readonly eventId: string; readonly outcome: ToolOutcome } | null;
  reconciled: {
    readonly sequence: number;
    readonly eventId: string;
    readonly fact: FactOf<'tool_reconciled'>;
  } | null;
  readonly notes: { readonly sequence: number; readonly message: string }[];
};

/** A call that waits for a person (`approval_requested`), with the decision once taken. */
export type ApprovalRow = {
  readonly kind: 'approval';
  readonly sequence: number;
  readonly timestamp: string;
  readonly fact: FactOf<'approval_requested'>;
  readonly invocationId: string;
  decided: { readonly sequence: number; readonly fact: FactOf<'approval_decided'> } | null;
};

/** Any other fact, one row each. */
export type FactRow = {
  readonly kind: 'fact';
  readonly sequence: number;
  readonly timestamp: string;
  readonly fact: Fact;
  streamed?: boolean;
};

export type Row = StreamRow | OperationRow | ApprovalRow | FactRow;

/** One invocation's rows, in sequence order. */
export type Section = {
  readonly invocation: Invocation;
  status: SectionStatus;
  readonly rows: Row[];
  readonly streams: Map<string, StreamRow>;
  readonly openedAt: string;
};

/** The timeline of one session, folded from its facts. */
export type Timeline = {
  lastSequence: number;
  readonly sections: Map<string, Section>;
  readonly order: string[];
  readonly operations: Map<string, OperationRow>;
  /** Approval rows by operation id (an operation id is unique in its session). */
  readonly approvals: Map<string, ApprovalRow>;
  /** Open invocations that no run on this server owns: their open operations are uncertain. */
  notLive: Set<string>;
};

/** How a dispatched operation stands. */
export type OperationState = 'settled' | 'failed' | 'in-flight' | 'uncertain';

/** An empty timeline. */
export function createTimeline(): Timeline {
  return {
    lastSequence: 0,
    sections: new Map(),
    order: [],
    operations: new Map(),
    approvals: new Map(),
    notLive: new Set(),
  };
}

function operationKey(invocationId: string, operationId: string): string {
  return `${invocationId}\n${operationId}`;
}

/** The status an invocation's end gives its section. */
export function terminalStatus(outcome: InvocationOutcome): SectionStatus {
  switch (outcome.kind) {
    case 'handoff_paused':
      return 'paused';
    case 'approval_pending':
      return 'awaiting_approval';
    default:
      return outcome.kind;
  }
}

function sectionOf(timeline: Timeline, event: RuntimeEvent): Section {
  const id = event.invocation.invocationId;
  let section = timeline.sections.get(id);
  if (section === undefined) {
    section = {
      invocation: event.invocation,
      status: 'open',
      rows: [],
      streams: new Map(),
      openedAt: event.timestamp,
    };
    timeline.sections.set(id, section);
    timeline.order.push(id);
  }
  return section;
}

/**
 * Folds one stored fact in; returns the id of the invocation it changed, or null for a
 * repeat. A settlement, note or reconciliation joins its dispatch's row instead of
 * making a row of its own: one row per operation, every fact shown once.
 */
export function applyFact(timeline: Timeline, stored: StoredFact): string | null {
  if (stored.sequence <= timeline.lastSequence) return null;
  timeline.lastSequence = stored.sequence;
  const { event } = stored;
  const fact = event.fact;
  const invocationId = event.invocation.invocationId;
  const section = sectionOf(timeline, event);
  switch (fact.kind) {
    case 'model_observed': {
      let stream = section.streams.get(fact.stepId);
      if (stream === undefined) {
        stream = {
          kind: 'stream',
          stepId: fact.stepId,
          sequence: stored.sequence,
          last: stored.sequence,
          timestamp: event.timestamp,
          text: '',
          reasoning: '',
          toolDeltas: 0,
          done: false,
        };
        section.streams.set(fact.stepId, stream);
        section.rows.push(stream);
      }
      stream.last = stored.sequence;
      const observation = fact.observation;
      if (observation.kind === 'text_delta') stream.text += observation.text;
      else if (observation.kind === 'reasoning_delta') stream.reasoning += observation.text;
      else stream.toolDeltas += 1;
      break;
    }
    case 'model_completed': {
      const streamed = section.streams.get(fact.stepId);
      if (streamed) streamed.done = true;
      section.rows.push({
        kind: 'fact',
        sequence: stored.sequence,
        timestamp: event.timestamp,
        fact,
        streamed: Boolean(streamed && (streamed.text || streamed.reasoning)),
      });
      break;
    }
    case 'tool_dispatched': {
      const row: OperationRow = {
        kind: 'operation',
        sequence: stored.sequence,
        timestamp: event.timestamp,
        fact,
        invocationId,
        settled: null,
        reconciled: null,
        notes: [],
      };
      timeline.operations.set(operationKey(invocationId, fact.operationId), row);
      section.rows.push(row);
      break;
    }
    case 'tool_settled':
    case 'tool_notified':
    case 'tool_reconciled': {
      const operation = timeline.operations.get(operationKey(invocationId, fact.operationId));
      if (operation === undefined) {
        // A join without its dispatch in view: still one row, so no fact goes unseen.
        section.rows.push({ kind: 'fact', sequence: stored.sequence, timestamp: event.timestamp, fact });
        break;
      }
      if (fact.kind === 'tool_settled')
        operation.settled = { sequence: stored.sequence, eventId: event.id, outcome: fact.outcome };
      else if (fact.kind === 'tool_notified')
        operation.notes.push({ sequence: stored.sequence, message: fact.message });
      else operation.reconciled = { sequence: stored.sequence, eventId: event.id, fact };
      break;
    }
    case 'approval_requested': {
      const row: ApprovalRow = {
        kind: 'approval',
        sequence: stored.sequence,
        timestamp: event.timestamp,
        fact,
        invocationId,
        decided: null,
      };
      timeline.approvals.set(fact.operationId, row);
      section.rows.push(row);
      break;
    }
    case 'approval_decided': {
      const approval = timeline.approvals.get(fact.operationId);
      if (approval === undefined) {
        section.rows.push({ kind: 'fact', sequence: stored.sequence, timestamp: event.timestamp, fact });
        break;
      }
      approval.decided = { sequence: stored.sequence, fact };
      // The card lives in the section of the request; mark that one changed.
      return approval.invocationId;
    }
    case 'session_forked':
      section.status = 'forked';
      section.rows.push({ kind: 'fact', sequence: stored.sequence, timestamp: event.timestamp, fact });
      break;
    case 'invocation_ended':
      section.status = terminalStatus(fact.outcome);
      section.rows.push({ kind: 'fact', sequence: stored.sequence, timestamp: event.timestamp, fact });
      break;
    default:
      section.rows.push({ kind: 'fact', sequence: stored.sequence, timestamp: event.timestamp, fact });
  }
  return invocationId;
}

/** The sequences of the facts joined onto an operation's row after its dispatch. */
export function joinedSequences(operation: OperationRow): number[] {
  return [
    ...(operation.settled ? [operation.settled.sequence] : []),
    ...operation.notes.map((note) => note.sequence),
    ...(operation.reconciled ? [operation.reconciled.sequence] : []),
  ];
}

/** How a dispatched operation stands: settled, failed, reconciled, in flight or uncertain. */
export function operationState(timeline: Timeline, operation: OperationRow): OperationState {
  if (operation.settled) return operation.settled.outcome.kind === 'succeeded' ? 'settled' : 'failed';
  const decision: ReconciliationDecision | undefined = operation.reconciled?.fact.decision;
  if (decision !== undefined && decision.kind !== 'unknown')
    return decision.kind === 'succeeded' ? 'settled' : 'failed';
  const section = timeline.sections.get(operation.invocationId);
  const live = section?.status === 'open' && !timeline.notLive.has(operation.invocationId);
  return live ? 'in-flight' : 'uncertain';
}
