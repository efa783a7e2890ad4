import type { InvocationState, OperationState, RuleState, SessionState } from './append-rules.js';
import type { ForkSourceState } from './fork-rule.js';

/** The head of a chain: the last sequence and its digest. */
export type ChainHead = { sequence: number; digest: string };

/** A session's head and admission state. */
export type SessionRow = SessionState & { head: ChainHead | undefined };

const limit = 50_000;

/**
 * State the rules read, kept between batches while no other connection has written to
 * it (the dialect's `refresh` says what they wrote). Anything missing is read from the store inside
 * the write transaction; on any failure the whole cache is dropped.
 */
export class RuleCache implements RuleState {
  head: ChainHead | undefined;
  readonly sessions = new Map<string, SessionRow>();
  readonly invocations = new Map<string, InvocationState>();
  readonly operations = new Map<string, OperationState>();
  /** Which invocation took a submitter's key, keyed by session and key. */
  readonly submissions = new Map<string, string>();
  /** What fork boundaries hold, read for the batch that carries the fork (see `loadRuleState`). */
  readonly forkSources = new Map<string, ForkSourceState>();
  token: number | undefined;
  /**
   * Refreshes in a row that found the chain's head where this cache left it: no other
   * writer committed in between. A batch guesses the head (see `oneTripFits`) only after
   * `quietNeeded` of them; each stale guess doubles that (up to 64) and each good one
   * takes one off, so a writer among busy others stops paying for stale guesses. Both
   * outlive `reset`.
   */
  quietRefreshes = 1;
  quietNeeded = 1;

  static key(sessionId: string, id: string): string {
    return `${sessionId}\u0000${id}`;
  }

  invocation(sessionId: string, invocationId: string): InvocationState | undefined {
    return this.invocations.get(RuleCache.key(sessionId, invocationId));
  }

  operation(sessionId: string, operationId: string): OperationState | undefined {
    return this.operations.get(RuleCache.key(sessionId, operationId));
  }

  submission(sessionId: string, key: string): string | undefined {
    return this.submissions.get(RuleCache.key(sessionId, key));
  }

  sessionHasFacts(sessionId: string): boolean {
    return this.sessions.get(sessionId)?.head !== undefined;
  }

  forkSource(key: string): ForkSourceState | undefined {
    return this.forkSources.get(key);
  }

  session(sessionId: string): SessionRow {
    let row = this.sessions.get(sessionId);
    if (row === undefined) {
      row = { head: undefined, liveInvocationId: null, heldForInvocationId: null };
      this.sessions.set(sessionId, row);
    }
    return row;
  }

  /** Forgets everything (another writer committed, or a batch failed). */
  reset(): void {
    this.head = undefined;
    this.sessions.clear();
    this.invocations.clear();
    this.operations.clear();
    this.submissions.clear();
    this.forkSources.clear();
    this.token = undefined;
  }

  /**
   * Forgets what is known of `sessionIds` (other writers wrote to them): their heads,
   * admission, invocations and operations, which only events of their own session
   * change. Everything cached of a session is keyed under it and loaded with its row, so
   * a session not in `sessions` has nothing else here either.
   */
  forgetSessions(sessionIds: Iterable<string>): void {
    const gone = new Set<string>();
    for (const id of sessionIds) if (this.sessions.delete(id)) gone.add(id);
    if (gone.size === 0) return;
    for (const map of [this.invocations, this.operations, this.submissions]) {
      for (const key of map.keys()) {
        if (gone.has(key.slice(0, key.indexOf('\u0000')))) map.delete(key);
      }
    }
  }

  /** Keeps memory bounded on long-lived logs: past the limit, start over. */
  trim(): void {
    if (
      this.invocations.size +
        this.operations.size +
        this.sessions.size +
        this.submissions.size +
        this.forkSources.size >
      limit
    ) {
      this.reset();
    }
  }
}
