import { randomUUID } from 'node:crypto';
import type { Invocation } from '@factum/agent-facts';

/** A fresh invocation: a new session unless one is given, new turn, run and invocation ids. */
export function newInvocation(sessionId?: string): Invocation {
  const id = () => randomUUID().slice(0, 8);
  return {
    sessionId: sessionId ?? `session-${id()}`,
    turnId: `turn-${id()}`,
    runId: `run-${id()}`,
    invocationId: `invocation-${id()}`,
  };
}
