import type { FactOf, Invocation, TerminalStatus } from '@factum/agent-facts';
import { terminalStatusOf } from '@factum/agent-facts';
import type { StoredEvent } from '@factum/event-log';

/** How an invocation stands in the log: still open, or how it ended. */
export type InvocationStatus = 'open' | TerminalStatus;

/** One invocation as the sessions API reports it. */
export type InvocationSummary = {
  readonly invocation: Invocation;
  readonly status: InvocationStatus;
  readonly message: string | undefined;
  readonly firstSequence: number;
  readonly lastSequence: number;
  readonly events: number;
  readonly openedAt: string;
  readonly updatedAt: string;
  /** Operations dispatched (T1) with no settlement (T2) yet. */
  readonly unsettledOperations: number;
  readonly rejections: number;
};

type MutableSummary = { -readonly [K in keyof InvocationSummary]: InvocationSummary[K] } & {
  readonly unsettled: Set<string>;
};

/**
 * A projection of the log kept in memory: which sessions exist and, for each, its
 * invocations with their status, unsettled operations and rejections. It is fed every
 * event once, in sequence order, by the `LogFollower`, and can be rebuilt from the
 * log at any time.
 */
export class SessionIndex {
  readonly #sessions = new Map<string, MutableSummary[]>();
  readonly #invocations = new Map<string, MutableSummary>();
  readonly #forks = new Map<string, FactOf<'session_forked'>>();

  /** Folds one event into the projection. */
  apply({ sequence, event }: StoredEvent): void {
    if (event.fact.kind === 'session_forked') {
      // A fork's first fact opens no invocation: the session exists, with none yet.
      this.#forks.set(event.invocation.sessionId, event.fact);
      if (!this.#sessions.has(event.invocation.sessionId)) this.#sessions.set(event.invocation.sessionId, []);
      return;
    }
    const id = event.invocation.invocationId;
    let summary = this.#invocations.get(id);
    if (summary === undefined) {
      summary = {
        invocation: event.invocation,
        status: 'open',
        message: undefined,
        firstSequence: sequence,
        lastSequence: sequence,
        events: 0,
        openedAt: event.timestamp,
        updatedAt: event.timestamp,
        unsettledOperations: 0,
        rejections: 0,
        unsettled: new Set(),
      };
      this.#invocations.set(id, summary);
      const list = this.#sessions.get(event.invocation.sessionId) ?? [];
      list.push(summary);
      this.#sessions.set(event.invocation.sessionId, list);
    }
    summary.events += 1;
    summary.lastSequence = sequence;
    summary.updatedAt = event.timestamp;
    const fact = event.fact;
    switch (fact.kind) {
      case 'invocation_opened':
        if (fact.input.kind === 'message') summary.message = fact.input.content.slice(0, 200);
        break;
      case 'tool_dispatched':
        summary.unsettled.add(fact.operationId);
        break;
      case 'tool_settled':
        summary.unsettled.delete(fact.operationId);
        break;
      case 'tool_reconciled':
        if (fact.decision.kind !== 'unknown') summary.unsettled.delete(fact.operationId);
        break;
      case 'tool_rejected':
        summary.rejections += 1;
        break;
      case 'invocation_ended':
        summary.status = terminalStatusOf(fact.outcome);
        break;
      default:
        break;
    }
    summary.unsettledOperations = summary.unsettled.size;
  }

  /** The invocation with this id, if the log holds one. */
  invocation(invocationId: string): InvocationSummary | undefined {
    const summary = this.#invocations.get(invocationId);
    return summary === undefined ? undefined : freeze(summary);
  }

  /** Where a forked session's history comes from; undefined for a session that is not a fork. */
  forkOf(sessionId: string): FactOf<'session_forked'> | undefined {
    return this.#forks.get(sessionId);
  }

  /** A session's invocations in the order they opened, or undefined for an unknown session. */
  session(sessionId: string): InvocationSummary[] | undefined {
    return this.#sessions.get(sessionId)?.map(freeze);
  }

  /** Every session id with its invocations, most recently active first. */
  sessions(): { readonly id: string; readonly invocations: InvocationSummary[] }[] {
    return [...this.#sessions.entries()]
      .map(([id, list]) => ({ id, invocations: list.map(freeze) }))
      .sort((a, b) => lastOf(b.invocations) - lastOf(a.invocations));
  }
}

function freeze(summary: MutableSummary): InvocationSummary {
  const { unsettled: _, ...rest } = summary;
  return rest;
}

function lastOf(invocations: readonly InvocationSummary[]): number {
  return invocations.reduce((last, summary) => Math.max(last, summary.lastSequence), 0);
}
