import type { Invocation } from '@factum/agent-facts';
import type { EventLog } from '../../src/index.ts';
import { parkFor } from './approvals.ts';
import { facts, invocation, settled, write } from './facts.ts';

/** Three sessions: a finished turn with an out-of-line result, a parked approval, a live run. */
export async function recordSessions(
  log: EventLog,
): Promise<{ done: Invocation; parked: Invocation; live: Invocation }> {
  const done = invocation('-done', 'finished');
  const parked = invocation('-parked', 'waiting');
  const live = invocation('-live', 'running');
  await log.append(write(done, facts.opened('first')));
  await log.append(write(done, facts.completed('s', [{ id: 'c' }])));
  await log.append(write(done, facts.dispatched('s:c', { kind: 'provider', stepId: 's' })));
  await log.append(settled(done, 's:c', { rows: Array.from({ length: 50 }, (_, n) => `row ${n}`) }));
  await log.append(write(done, facts.ended()));
  await parkFor(log, parked, ['s:p']);
  await log.append(write(live, facts.opened('still going')));
  await log.append(write(live, facts.completed('s', [{ id: 'l' }])));
  await log.append(write(live, facts.dispatched('s:l', { kind: 'provider', stepId: 's' })));
  return { done, parked, live };
}

/** The rows `recordSessions` leaves in each table, with a host's lease held while it ran. */
export const recordedRows = {
  events: 11,
  tool_results: 1,
  invocations: 3,
  operations: 3,
  sessions: 3,
  hosts: 1,
} as const;
