import { canonicalJson, type InvocationInput, type RunBoundary, successorOf } from '@factum/agent-facts';
import type { EventLog } from '@factum/event-log';
import type { AdmissionIndex } from './admission-index.js';
import { refuseParked, refuseWaiting } from './approval-admission.js';
import type { SessionEvent } from './context-projection.js';
import { executionFingerprint } from './execution-fingerprint.js';
import type { ContextBounds } from './model-turn.js';
import { RunError } from './run-error.js';
import type { RunInput } from './run-input.js';
import type { SessionProjection } from './session-projection.js';

/**
 * Checks what the log must show before a run may open, and returns what its
 * `invocation_opened` records. Throws `RunError`; writes nothing. The log checks its own
 * rules again when the opening commits, which may be later (it rides along).
 *
 * `unchecked`: the session's history in memory is taken as it is, without reading the
 * log's head, when it ends where this log last left it — for an opening that rides with
 * its first step's commit on the condition that the session still ends there (see
 * `InvocationWriter.openOn`): another process's write meanwhile makes that commit refuse
 * it, and the run starts over. A refusal is never judged on such a history: admission
 * reads the head and judges again first.
 */
export async function admit(
  log: EventLog,
  input: RunInput,
  bounds: ContextBounds,
  projection: SessionProjection,
  unchecked = false,
): Promise<InvocationInput> {
  if (unchecked) {
    try {
      return await judge(log, input, projection, bounds, true);
    } catch (error) {
      if (!RunError.isInstance(error)) throw error;
    }
  }
  return judge(log, input, projection, bounds, false);
}

async function judge(
  log: EventLog,
  input: RunInput,
  projection: SessionProjection,
  bounds: ContextBounds,
  unchecked: boolean,
): Promise<InvocationInput> {
  const { work, invocation } = input;
  // Lent to the run's first step (see `SessionProjection.view`).
  const view = await projection.view(log, bounds, { lend: true, unchecked });
  const { events } = view;
  const index = projection.admission(view);
  if (index.has(invocation.invocationId)) {
    throw new RunError(
      'duplicate_invocation',
      `invocation ${invocation.invocationId} already exists in session ${invocation.sessionId}: give a new invocation id, or an idempotency key to get the first run back`,
    );
  }
  refuseOccupied(index, input.invocation.invocationId, input.invocation.sessionId);
  switch (work.kind) {
    case 'message': {
      const previous = index.lastOpened();
      if (previous !== undefined && !work.allowPriorUnknown) refuseUncertain(index, previous);
      if (index.hasParkedRun()) refuseWaiting(events);
      return {
        kind: 'message',
        content: work.message,
        sourceMessages: [...(work.sourceMessages ?? [])],
        ...(input.requestFingerprint === undefined ? {} : { requestFingerprint: input.requestFingerprint }),
      };
    }
    case 'continuation': {
      await checkBoundary(log, work.source);
      if (!work.allowPriorUnknown) refuseUncertain(index, work.source.invocation.invocationId);
      refuseParked(events, work.source);
      return {
        kind: 'continuation',
        source: work.source,
        ...(input.requestFingerprint === undefined ? {} : { requestFingerprint: input.requestFingerprint }),
      };
    }
    case 'handoff': {
      await checkBoundary(log, work.source);
      checkSuccessor(events, input);
      return { kind: 'handoff', source: work.source, pause: work.pause };
    }
    default:
      return work satisfies never;
  }
}

/**
 * The log's own admission rules, checked on the session's history before anything is
 * written (the log checks them again when the opening commits, which may be later): a
 * live invocation makes the session `busy`; a handoff pause holds it for its successor.
 * A fork's inherited prefix leaves neither behind.
 */
function refuseOccupied(index: AdmissionIndex, invocationId: string, sessionId: string): void {
  const { live, heldFor } = index.occupancy();
  if (live !== null) {
    throw new RunError(
      'busy',
      `session ${sessionId} already has a live invocation (${live}); one invocation per session runs at a time`,
    );
  }
  if (heldFor !== null && heldFor !== invocationId) {
    throw new RunError(
      'sealed',
      `session ${sessionId} is paused for a handoff to invocation ${heldFor}; only that successor may continue it`,
    );
  }
}

function refuseUncertain(index: AdmissionIndex, invocationId: string): void {
  const uncertain = index.uncertainIn(invocationId);
  if (uncertain.length > 0) {
    throw new RunError(
      'uncertain_operations',
      `earlier operations have unknown outcomes (${uncertain.join(', ')}): reconcile them first, or allow prior unknowns explicitly`,
    );
  }
}

async function checkBoundary(log: EventLog, source: RunBoundary): Promise<void> {
  const found = await log.runSource(source.invocation.sessionId, source.invocation.runId, source.highWater);
  const boundary = found?.boundary;
  if (
    boundary === undefined ||
    boundary.highWater !== source.highWater ||
    boundary.digest !== source.digest
  ) {
    throw new RunError(
      'unknown_source',
      `run ${source.invocation.runId} has no event at sequence ${source.highWater} with that digest: take the boundary from runSource()`,
    );
  }
}

function checkSuccessor(events: readonly SessionEvent[], input: RunInput): void {
  if (input.work.kind !== 'handoff') return;
  const { source, pause } = input.work;
  const ended = events.find(
    ({ event }) =>
      event.invocation.invocationId === source.invocation.invocationId &&
      event.fact.kind === 'invocation_ended',
  )?.event.fact;
  if (ended?.kind !== 'invocation_ended' || ended.outcome.kind !== 'handoff_paused') {
    throw new RunError(
      'handoff_mismatch',
      `invocation ${source.invocation.invocationId} was not paused for a handoff`,
    );
  }
  if (canonicalJson(ended.outcome.pause) !== canonicalJson(pause)) {
    throw new RunError('handoff_mismatch', 'the pause given is not the one the log recorded');
  }
  if (canonicalJson(successorOf(pause.intent, source.invocation)) !== canonicalJson(input.invocation)) {
    throw new RunError(
      'handoff_mismatch',
      `only invocation ${pause.intent.successorInvocationId} of run ${pause.intent.successorRunId} may resume this turn`,
    );
  }
  if (executionFingerprint(input) !== pause.execution.fingerprint) {
    throw new RunError(
      'fingerprint_mismatch',
      'the successor differs from the paused run in configuration, provider, model, options, output limit or tools',
    );
  }
}
