import type { RunBoundary } from '@factum/agent-facts';
import type { SessionEvent } from './context-projection.js';
import { parkedRunOf, waitingParkedRun } from './parked-run.js';
import { RunError } from './run-error.js';

/**
 * A new message may not start while a parked run of the session still has a call that
 * was neither carried out nor rejected: the person's decision would otherwise be lost
 * (an approved call never run) or the model would be told a call "did not run" that may
 * still run. Decide and continue the parked run first.
 */
export function refuseWaiting(events: readonly SessionEvent[]): void {
  const parked = waitingParkedRun(events);
  if (parked === undefined) return;
  const waiting = parked.operations.filter((operation) => operation.state === 'waiting');
  throw new RunError(
    'approval_pending',
    `invocation ${parked.invocation.invocationId} is parked on ${waiting.map((op) => op.operationId).join(', ')}: decide ${waiting.length === 1 ? 'it' : 'them'} and continue that run first`,
  );
}

/**
 * A continuation from a parked run needs every waiting call decided, and none of its
 * calls left uncertain by an earlier continuation that crashed (resolve those first).
 */
export function refuseParked(events: readonly SessionEvent[], source: RunBoundary): void {
  const parked = parkedRunOf(events, source.invocation.invocationId);
  if (parked === undefined || source.highWater < parked.endSequence) return;
  const uncertain = parked.operations.filter((operation) => operation.state === 'uncertain');
  if (uncertain.length > 0) {
    throw new RunError(
      'uncertain_operations',
      `approved operations have unknown outcomes (${uncertain.map((op) => op.operationId).join(', ')}): resolve them first`,
    );
  }
  const undecided = parked.operations.filter(
    (operation) => operation.state === 'waiting' && operation.decision === undefined,
  );
  if (undecided.length > 0) {
    throw new RunError(
      'approval_pending',
      `operations still wait for a decision (${undecided.map((op) => op.operationId).join(', ')})`,
    );
  }
}
