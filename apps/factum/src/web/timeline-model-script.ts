/**
 * Browser code that folds facts into the timeline's model: invocations in the order
 * they opened, each with its rows in sequence order; a dispatch (T1) is one row that
 * its settlement (T2), notes and reconciliation join; streamed model text is gathered
 * per step. Plain ES2020, no template literals, so it can live in this string.
 */
export const TIMELINE_MODEL_SCRIPT = String.raw`
function createTimeline() {
  return { lastSequence: 0, sections: new Map(), order: [], operations: new Map(), notLive: new Set() };
}

function operationKey(invocationId, operationId) {
  return invocationId + '\n' + operationId;
}

function terminalStatus(outcome) {
  if (outcome.kind === 'handoff_paused') return 'paused';
  return outcome.kind;
}

function sectionOf(timeline, event) {
  var id = event.invocation.invocationId;
  var section = timeline.sections.get(id);
  if (!section) {
    section = { invocation: event.invocation, status: 'open', rows: [], streams: new Map(), openedAt: event.timestamp };
    timeline.sections.set(id, section);
    timeline.order.push(id);
  }
  return section;
}

/** Folds one stored event in; returns the id of the invocation it changed, or null for a repeat. */
function applyFact(timeline, stored) {
  if (stored.sequence <= timeline.lastSequence) return null;
  timeline.lastSequence = stored.sequence;
  var event = stored.event;
  var fact = event.fact;
  var section = sectionOf(timeline, event);
  var base = { kind: 'fact', sequence: stored.sequence, timestamp: event.timestamp, fact: fact };
  var key = fact.operationId ? operationKey(event.invocation.invocationId, fact.operationId) : null;
  var operation = key ? timeline.operations.get(key) : null;
  switch (fact.kind) {
    case 'model_observed': {
      var stream = section.streams.get(fact.stepId);
      if (!stream) {
        stream = { kind: 'stream', stepId: fact.stepId, sequence: stored.sequence, last: stored.sequence,
          timestamp: event.timestamp, text: '', reasoning: '', toolDeltas: 0, done: false };
        section.streams.set(fact.stepId, stream);
        section.rows.push(stream);
      }
      stream.last = stored.sequence;
      var observation = fact.observation;
      if (observation.kind === 'text_delta') stream.text += observation.text;
      else if (observation.kind === 'reasoning_delta') stream.reasoning += observation.text;
      else stream.toolDeltas += 1;
      break;
    }
    case 'model_completed': {
      var streamed = section.streams.get(fact.stepId);
      if (streamed) streamed.done = true;
      base.streamed = Boolean(streamed && streamed.text);
      section.rows.push(base);
      break;
    }
    case 'tool_dispatched': {
      var dispatched = { kind: 'operation', sequence: stored.sequence, timestamp: event.timestamp, fact: fact,
        invocationId: event.invocation.invocationId, settled: null, reconciled: null, notes: [] };
      timeline.operations.set(key, dispatched);
      section.rows.push(dispatched);
      break;
    }
    case 'tool_settled':
    case 'tool_notified':
    case 'tool_reconciled': {
      if (operation) {
        if (fact.kind === 'tool_settled') operation.settled = { sequence: stored.sequence, outcome: fact.outcome };
        if (fact.kind === 'tool_notified') operation.notes.push({ sequence: stored.sequence, message: fact.message });
        if (fact.kind === 'tool_reconciled') operation.reconciled = { sequence: stored.sequence, fact: fact };
      }
      base.kind = 'link';
      base.target = operation;
      section.rows.push(base);
      break;
    }
    case 'invocation_ended':
      section.status = terminalStatus(fact.outcome);
      section.rows.push(base);
      break;
    default:
      section.rows.push(base);
  }
  return event.invocation.invocationId;
}

/** How a dispatched operation stands: settled, failed, reconciled, in flight or uncertain. */
function operationState(timeline, operation) {
  if (operation.settled) return operation.settled.outcome.kind === 'succeeded' ? 'settled' : 'failed';
  if (operation.reconciled && operation.reconciled.fact.decision.kind !== 'unknown') {
    return operation.reconciled.fact.decision.kind === 'succeeded' ? 'settled' : 'failed';
  }
  var section = timeline.sections.get(operation.invocationId);
  var live = section && section.status === 'open' && !timeline.notLive.has(operation.invocationId);
  return live ? 'in-flight' : 'uncertain';
}

function rejectionSentence(reason) {
  switch (reason.kind) {
    case 'cancelled': return 'did not run: the run was cancelled before this call started';
    case 'invalid_input': return 'did not run: the input does not match the tool\u2019s schema (' + reason.message + ')';
    case 'unavailable': return 'did not run: no tool of this name is available in this run';
    case 'not_nestable': return 'did not run: this tool cannot be called from inside code';
    case 'interrupted': return 'did not run: the process stopped before this call was dispatched';
    case 'limit_exceeded': return 'did not run: ' + reason.message;
    case 'repeated_call_id': return 'did not run: an earlier call in the same step has the same call id; give every call its own id';
    default: return 'did not run (' + reason.kind + ')';
  }
}
`;
