import { type FactError, ToolError } from '@factum/agent-facts';
import type { EventLog } from '@factum/event-log';
import type { CapturedTools } from '@factum/tools';
import type { InvocationWriter } from './invocation-writer.js';
import type { ContextBounds } from './model-turn.js';
import { parkedRunOf } from './parked-run.js';
import { RunError } from './run-error.js';
import type { RunInput } from './run-input.js';
import type { SessionProjection } from './session-projection.js';

/**
 * The first thing a continuation of a parked run does, before any model step: each
 * approved call runs with exactly the input recorded in its `approval_requested`
 * (T1 → effect → T2 through the ordinary runner, so the log checks the approved digest
 * in T1's transaction and refuses a second dispatch), and each denied or expired call
 * is recorded as `tool_rejected`. Calls an earlier continuation already carried out are
 * skipped. Returns the failure that must end the run (a commit that was not confirmed,
 * an effect that cannot tell whether it happened), if any.
 *
 * It reads the parked run from the history admission checked (lent to it, so a long
 * session is not read again, see `SessionProjection.view`). The opening rides with the
 * first call carried out, conditional on the session still ending where that history
 * does (`InvocationWriter.openOn`): if another process continued the run or wrote to the
 * session meanwhile, the log refuses the commit `session_moved`, nothing runs, and the
 * run starts over from admission on the log's head. An opening already durable (a keyed
 * run) was committed after admission's check, which its commit carried on or ended.
 */
export async function continueApproved(
  context: {
    readonly log: EventLog;
    readonly input: RunInput;
    readonly bounds: ContextBounds;
    readonly projection: SessionProjection;
  },
  writer: InvocationWriter,
  captured: CapturedTools,
  signal: AbortSignal,
): Promise<FactError | undefined> {
  const { log, input, bounds, projection } = context;
  if (input.work.kind !== 'continuation') return undefined;
  const source = input.work.source;
  // Lent on: a continuation with nothing left to carry out leaves the check to its first step.
  const view = await projection.view(log, bounds, { take: true, lend: true });
  if (writer.pendingOpening() !== undefined) writer.openOn(view);
  const { events } = view;
  const parked = parkedRunOf(events, source.invocation.invocationId);
  if (parked === undefined || source.highWater < parked.endSequence) return undefined;
  for (const operation of parked.operations) {
    if (operation.state !== 'waiting') continue;
    const decision = operation.decision;
    if (decision === undefined) {
      throw new RunError('approval_pending', `operation ${operation.operationId} waits for a decision`);
    }
    try {
      if (decision.decision === 'approved') {
        await captured.dispatchApproved(operation.operationId, operation.call, signal);
      } else if (decision.decision === 'denied') {
        await captured.rejectParked(operation.operationId, operation.call, {
          kind: 'denied',
          ...(decision.note === undefined ? {} : { note: decision.note }),
        });
      } else {
        await captured.rejectParked(operation.operationId, operation.call, { kind: 'expired' });
      }
    } catch (error) {
      if (ToolError.isInstance(error) && (error.code === 'persistence' || error.code === 'outcome_unknown')) {
        return { code: error.code, message: error.message };
      }
      if (!ToolError.isInstance(error)) throw error;
      // A failed effect or a rejection is recorded: the model reads it.
    }
  }
  return undefined;
}
