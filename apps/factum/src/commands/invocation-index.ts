import type {
  FactOf,
  Invocation,
  InvocationConfiguration,
  InvocationInput,
  InvocationOutcome,
  ToolCall,
} from '@factum/agent-facts';
import type { EventLog } from '@factum/event-log';
import { CliError } from './cli-error.js';

/** What the log says about one invocation, read in one pass. */
export type InvocationSummary = {
  readonly invocation: Invocation;
  readonly openedSequence: number;
  readonly openedAt: string;
  readonly input: InvocationInput;
  readonly configuration: InvocationConfiguration | undefined;
  outcome: InvocationOutcome | undefined;
  /** The sequence of its latest fact. */
  lastSequence: number;
  steps: number;
  dispatched: number;
  /** Operations dispatched and never settled (nor closed by reconciliation), by id. */
  readonly open: Map<string, ToolCall>;
  /** The invocation that continued this one from where it parked (after approvals), if any. */
  continuedBy: string | undefined;
};

const PAGE = 1000;

/**
 * Every invocation in the log (optionally of one session), oldest first, from paged
 * reads — the log is never loaded whole. Viewers use it to list, find and diagnose.
 */
export async function indexInvocations(
  log: EventLog,
  filter: {
    readonly sessionId?: string;
    /** Filled with each forked session's `session_forked`, by session. */
    readonly forks?: Map<string, FactOf<'session_forked'>>;
  } = {},
): Promise<InvocationSummary[]> {
  const byId = new Map<string, InvocationSummary>();
  let after = 0;
  for (;;) {
    const page = await log.read({
      afterSequence: after,
      limit: PAGE,
      ...(filter.sessionId === undefined ? {} : { scope: { session: filter.sessionId } }),
    });
    for (const { sequence, event } of page) {
      after = sequence;
      const key = `${event.invocation.sessionId}\u0000${event.invocation.invocationId}`;
      const fact = event.fact;
      if (fact.kind === 'session_forked') filter.forks?.set(event.invocation.sessionId, fact);
      if (fact.kind === 'invocation_opened') {
        byId.set(key, {
          invocation: event.invocation,
          openedSequence: sequence,
          openedAt: event.timestamp,
          input: fact.input,
          configuration: fact.configuration,
          outcome: undefined,
          lastSequence: sequence,
          steps: 0,
          dispatched: 0,
          open: new Map(),
          continuedBy: undefined,
        });
        if (fact.input.kind === 'continuation') {
          const { sessionId, invocationId } = fact.input.source.invocation;
          const source = byId.get(`${sessionId}\u0000${invocationId}`);
          if (source !== undefined) source.continuedBy = event.invocation.invocationId;
        }
        continue;
      }
      const summary = byId.get(key);
      if (summary === undefined) continue;
      summary.lastSequence = sequence;
      if (fact.kind === 'model_requested') summary.steps += 1;
      else if (fact.kind === 'tool_dispatched') {
        summary.dispatched += 1;
        summary.open.set(fact.operationId, fact.call);
      } else if (fact.kind === 'tool_settled') summary.open.delete(fact.operationId);
      else if (fact.kind === 'tool_reconciled' && fact.decision.kind !== 'unknown') {
        summary.open.delete(fact.operationId);
      } else if (fact.kind === 'invocation_ended') summary.outcome = fact.outcome;
    }
    if (page.length < PAGE) break;
  }
  return [...byId.values()].sort((a, b) => a.openedSequence - b.openedSequence);
}

/** The one invocation whose id is `id` (or starts with it), or a `not_found` error. */
export function findInvocation(index: readonly InvocationSummary[], id: string): InvocationSummary {
  const exact = index.filter((summary) => summary.invocation.invocationId === id);
  const matches = exact.length > 0 ? exact : index.filter((s) => s.invocation.invocationId.startsWith(id));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) {
    throw new CliError('not_found', `no invocation ${id} in the log: list them with \`factum log\``);
  }
  throw new CliError('usage', `${matches.length} invocations start with ${id}: give more of the id`);
}
