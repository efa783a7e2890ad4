import type { Invocation } from '@factum/agent-facts';
import { type EventLog, recoverInvocations } from '@factum/event-log';
import { reconcileUncertain, type ToolCatalog } from '@factum/tools';
import type { LogSnapshot } from './log-snapshot.js';

/**
 * What a restarting host does after a crash: ends every unfinished invocation
 * (`recoverInvocations`), then runs the tools' reconcilers over every invocation that
 * still has an operation open. Runs no effect.
 */
export async function recoverLog(
  log: EventLog,
  snapshot: LogSnapshot,
  catalog: ToolCatalog,
): Promise<{ ended: number; reconciled: number }> {
  const ended = await recoverInvocations(log);
  const invocations = new Map<string, Invocation>();
  for (const { event } of snapshot.events) invocations.set(event.invocation.invocationId, event.invocation);
  let reconciled = 0;
  for (const [id, recovery] of snapshot.recoveries) {
    if (recovery.uncertainOperations.length === 0) continue;
    const outcomes = await reconcileUncertain(log, invocations.get(id)!, { catalog });
    reconciled += outcomes.filter((outcome) => outcome.decision !== 'left_uncertain').length;
  }
  return { ended, reconciled };
}
