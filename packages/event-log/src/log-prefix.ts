import { contentDigest, type LogScope, type TerminalStatus, terminalStatusOf } from '@factum/agent-facts';
import type { StoredEvent } from './stored-event.js';

/** The digest of an empty prefix: the start of every chain. */
export const EMPTY_DIGEST = contentDigest('');

/** What a prefix says about one invocation. */
export type InvocationProjection = {
  readonly opened: boolean;
  readonly terminal: TerminalStatus | undefined;
};

/**
 * A whole history up to a high-water sequence — of the log or of one session — with
 * the chain digest that vouches for it. Two prefixes with equal digests hold the same
 * events in the same order.
 */
export class LogPrefix {
  readonly events: readonly StoredEvent[];
  readonly digest: string;
  readonly highWater: number;
  readonly scope: LogScope;

  constructor(init: { events: readonly StoredEvent[]; digest: string; highWater: number; scope: LogScope }) {
    this.events = init.events;
    this.digest = init.digest;
    this.highWater = init.highWater;
    this.scope = init.scope;
  }

  /** Whether the invocation opened in this prefix, and how it ended if it did. */
  projectInvocation(invocationId: string): InvocationProjection {
    let opened = false;
    let terminal: TerminalStatus | undefined;
    for (const { event } of this.events) {
      if (event.invocation.invocationId !== invocationId) continue;
      if (event.fact.kind === 'invocation_opened') opened = true;
      if (event.fact.kind === 'invocation_ended') terminal = terminalStatusOf(event.fact.outcome);
    }
    return { opened, terminal };
  }
}
