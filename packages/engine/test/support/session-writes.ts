import { EventWrite, type Fact, type Invocation, RuntimeEvent } from '@factum/agent-facts';
import type { EventLog } from '@factum/event-log';
import { configuration } from './agent-loop.ts';

/** Invocation `n` of `session`. */
export const invocationAt = (session: string, n: number): Invocation => ({
  sessionId: session,
  turnId: `turn-${n}`,
  runId: `run-${n}`,
  invocationId: `invocation-${n}`,
});

/** A message run's opening, and a completed end: a whole turn with nothing in between. */
export const opened: Fact = {
  kind: 'invocation_opened',
  configuration: configuration(),
  input: { kind: 'message', content: 'hello', sourceMessages: [] },
};
export const ended: Fact = { kind: 'invocation_ended', outcome: { kind: 'completed' } };

/** `fact` as a write of invocation `n` of `session`. */
export const factWrite = (session: string, n: number, fact: Fact) =>
  EventWrite.plain(RuntimeEvent.create(invocationAt(session, n), fact));

/**
 * `log` with its reads counted (every other member passed through as it is):
 * `wholeReads()` counts reads of a whole session (`scopedPrefix`), `pages()` reads of the
 * events after a sequence (`read`).
 */
export function countingReads(log: EventLog): {
  log: EventLog;
  wholeReads: () => number;
  pages: () => number;
} {
  const counts = { scopedPrefix: 0, read: 0 };
  const counted = new Proxy(log, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name, target);
      if (typeof value !== 'function') return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(target);
      if (name !== 'scopedPrefix' && name !== 'read') return bound;
      return (...args: unknown[]) => {
        counts[name] += 1;
        return bound(...args);
      };
    },
  });
  return { log: counted, wholeReads: () => counts.scopedPrefix, pages: () => counts.read };
}
