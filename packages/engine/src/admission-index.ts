import type { FactOf } from '@factum/agent-facts';
import type { SessionEvent } from './context-projection.js';

/** What an event did to an operation: dispatched it, or closed it (settled, or reconciled with a decision). */
type OperationMark = { readonly index: number; readonly invocationId: string; readonly dispatch: boolean };

/**
 * What admission asks of a session's history, kept as the history grows instead of
 * scanned from its start at every run: without it, admitting a run cost a pass over
 * every event of the session several times over (a session of 1,000 turns spent 5 ms a
 * turn there). Fed in log order; each answer equals the full scan it replaces (the
 * engine's test "an admission index answers as the scans of the whole history do").
 */
export class AdmissionIndex {
  /** How many events of the history it has taken, and the last of them (by identity). */
  fed = 0;
  last: SessionEvent | undefined;
  readonly #invocations = new Set<string>();
  #live: string | null = null;
  #heldFor: string | null = null;
  #lastOpened: string | undefined;
  /** Each opening, with the invocation opened just before it (a message run's parent). */
  readonly #opened = new Map<string, { fact: FactOf<'invocation_opened'>; previous: string | undefined }>();
  /** Every mark of each operation, in log order. */
  readonly #marks = new Map<string, OperationMark[]>();
  /**
   * Operations that may be open for some lineage. An operation dispatched once and then
   * closed in the same invocation is closed for every lineage (it is either not in it,
   * or dispatched and closed in it) and leaves this set; almost every operation does.
   */
  readonly #irregular = new Set<string>();
  #parkedEnds = 0;

  /** Takes the events of `events` it has not taken yet (it must extend what was fed). */
  feed(events: readonly SessionEvent[]): void {
    for (; this.fed < events.length; this.fed += 1) this.#take(events[this.fed]!);
    this.last = events[this.fed - 1];
  }

  /** Whether any event of the history belongs to `invocationId`. */
  has(invocationId: string): boolean {
    return this.#invocations.has(invocationId);
  }

  /** The invocation still live at the end of the history, and the successor a handoff holds it for. */
  occupancy(): { readonly live: string | null; readonly heldFor: string | null } {
    return { live: this.#live, heldFor: this.#heldFor };
  }

  /** The invocation opened last in the history. */
  lastOpened(): string | undefined {
    return this.#lastOpened;
  }

  /** Whether some invocation of the history ended parked on approvals (a full scan decides the rest). */
  hasParkedRun(): boolean {
    return this.#parkedEnds > 0;
  }

  /**
   * Operations dispatched and never settled or reconciled (with a decision) by the
   * invocations `invocationId` stands on (its `lineage`), in the order of their dispatch.
   */
  uncertainIn(invocationId: string): string[] {
    if (this.#irregular.size === 0) return [];
    const members = this.#lineage(invocationId);
    const open: { operationId: string; since: number }[] = [];
    for (const operationId of this.#irregular) {
      // Open from a dispatch until a close; a dispatch after a close opens it anew.
      let since: number | undefined;
      for (const mark of this.#marks.get(operationId)!) {
        if (!members.has(mark.invocationId)) continue;
        if (mark.dispatch) since ??= mark.index;
        else since = undefined;
      }
      if (since !== undefined) open.push({ operationId, since });
    }
    return open.sort((a, b) => a.since - b.since).map(({ operationId }) => operationId);
  }

  /** The invocations of `invocationId`'s lineage (see `lineage`). */
  #lineage(invocationId: string): Set<string> {
    const members = new Set<string>();
    let current: string | undefined = invocationId;
    while (current !== undefined && !members.has(current)) {
      members.add(current);
      const entry = this.#opened.get(current);
      if (entry === undefined) break;
      const input = entry.fact.input;
      current = input.kind === 'message' ? entry.previous : input.source.invocation.invocationId;
    }
    return members;
  }

  #take({ event }: SessionEvent): void {
    const invocationId = event.invocation.invocationId;
    this.#invocations.add(invocationId);
    const fact = event.fact;
    switch (fact.kind) {
      case 'invocation_opened':
        this.#opened.set(invocationId, { fact, previous: this.#lastOpened });
        this.#lastOpened = invocationId;
        this.#live = invocationId;
        this.#heldFor = null;
        return;
      case 'session_forked':
        // A fork's own history starts here: a run its prefix cut at a step is not live in
        // it, and a handoff hold of the source is the source's.
        this.#live = null;
        this.#heldFor = null;
        return;
      case 'invocation_ended':
        this.#live = null;
        this.#heldFor =
          fact.outcome.kind === 'handoff_paused' ? fact.outcome.pause.intent.successorInvocationId : null;
        if (fact.outcome.kind === 'approval_pending') this.#parkedEnds += 1;
        return;
      case 'tool_dispatched':
        this.#mark(fact.operationId, invocationId, true);
        return;
      case 'tool_settled':
        this.#mark(fact.operationId, invocationId, false);
        return;
      case 'tool_reconciled':
        if (fact.decision.kind !== 'unknown') this.#mark(fact.operationId, invocationId, false);
        return;
      default:
    }
  }

  #mark(operationId: string, invocationId: string, dispatch: boolean): void {
    let marks = this.#marks.get(operationId);
    if (marks === undefined) {
      marks = [];
      this.#marks.set(operationId, marks);
    }
    marks.push({ index: this.fed, invocationId, dispatch });
    if (regular(marks)) this.#irregular.delete(operationId);
    else this.#irregular.add(operationId);
  }
}

/** One dispatch, then a close in the invocation that dispatched it: closed for every lineage. */
function regular(marks: readonly OperationMark[]): boolean {
  const first = marks[0]!;
  if (!first.dispatch) return false;
  let closedInPlace = false;
  for (let i = 1; i < marks.length; i += 1) {
    const mark = marks[i]!;
    if (mark.dispatch) return false;
    if (mark.invocationId === first.invocationId) closedInPlace = true;
  }
  return closedInPlace;
}
