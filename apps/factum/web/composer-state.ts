/** A session as `GET /api/sessions` lists it. */
export type SessionListing = {
  readonly id: string;
  readonly status: 'running' | 'open' | 'completed' | 'failed' | 'cancelled' | 'paused' | 'awaiting_approval';
  readonly title?: string;
  readonly invocations: number;
  readonly events: number;
  readonly unsettledOperations: number;
  readonly rejections: number;
};

/** Whether the composer takes a message, and if not, why and what unblocks it. */
export type ComposerState =
  | { readonly enabled: true }
  | {
      readonly enabled: false;
      readonly reason: 'busy' | 'sealed' | 'uncertain' | 'awaiting_approval';
      readonly why: string;
    };

/**
 * The engine refuses a turn in a session that is running one (busy), that a handoff
 * sealed (paused), or whose earlier operations have unknown outcomes (uncertain): the
 * composer says so before the user types, with the action that unblocks it.
 */
export function composerState(session: SessionListing | undefined): ComposerState {
  if (session === undefined) return { enabled: true };
  if (session.status === 'running') {
    return {
      enabled: false,
      reason: 'busy',
      why: 'Busy: a turn is running in this session. Wait for it to end, or press Cancel on it.',
    };
  }
  if (session.status === 'paused') {
    return {
      enabled: false,
      reason: 'sealed',
      why: 'Sealed: the last turn was paused for a handoff. The session takes turns again once its successor resumes it.',
    };
  }
  if (session.status === 'awaiting_approval') {
    return {
      enabled: false,
      reason: 'awaiting_approval',
      why: 'Awaiting approval: the last turn waits for a person to approve or deny its calls. Decide them on their cards below; the turn then goes on.',
    };
  }
  if (session.unsettledOperations > 0) {
    const count = session.unsettledOperations;
    return {
      enabled: false,
      reason: 'uncertain',
      why: `Uncertain: ${count} operation${count === 1 ? ' was' : 's were'} dispatched and never settled. Close ${count === 1 ? 'it' : 'them'} with \`factum recover --apply\`, or Resolve ${count === 1 ? 'it' : 'each'} by hand on ${count === 1 ? 'its card' : 'their cards'}, then send.`,
    };
  }
  return { enabled: true };
}
