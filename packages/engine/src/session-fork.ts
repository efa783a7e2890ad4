import { randomUUID } from 'node:crypto';
import {
  type EventOrigin,
  EventWrite,
  type Invocation,
  type RunBoundary,
  RuntimeEvent,
} from '@factum/agent-facts';
import { AppendRefusedError, type EventLog } from '@factum/event-log';
import { RunError } from './run-error.js';

/** Which session to fork, and where: an invocation id or a step id (default: its last ended invocation). */
export type ForkSource = { readonly session: string; readonly at?: string };

/** Options of `Engine.fork`. */
export type ForkOptions = {
  /** The new session's id (default: `session-<random>`); refused `session_exists` if it has facts. */
  readonly newSession?: string;
  readonly signal?: AbortSignal;
};

/** A session made by a fork: its id, the boundary it references, and where its fact stands. */
export type ForkedSession = {
  readonly sessionId: string;
  /** The source session's boundary (the session and invocation that hold it, its high water and digest). */
  readonly source: RunBoundary;
  /** The step the fork starts before, for a fork inside an invocation. */
  readonly step?: string;
  /** The sequence of the new session's `session_forked`. */
  readonly sequence: number;
};

/**
 * Writes a fork's one fact, `session_forked`, as the first of a new session, in one
 * append: after a crash the log holds the whole fork or none of it. Nothing of the
 * prefix is copied or run again. A refusal of the log's rules (`unknown_session`,
 * `invalid_boundary`, `source_live`, `session_exists`) is thrown as the log's
 * `AppendRefusedError`, nothing written; any other failure is a `persistence` RunError.
 */
export async function forkSession(
  log: EventLog,
  from: ForkSource,
  options: ForkOptions & { readonly origin?: EventOrigin },
): Promise<ForkedSession> {
  if (options.signal?.aborted) throw new RunError('cancelled', 'the fork was aborted before it started');
  const point = await log.forkPoint(from.session, from.at);
  const id = () => randomUUID().slice(0, 8);
  const sessionId = options.newSession ?? `session-${id()}`;
  // The fork's fact has an invocation of its own that is never opened: nothing else is
  // ever appended under it, and the fork's turns open invocations of their own.
  const forkId = `fork-${id()}`;
  const invocation: Invocation = { sessionId, turnId: forkId, runId: forkId, invocationId: forkId };
  const fact =
    point.step === undefined
      ? { kind: 'session_forked' as const, source: point.source }
      : { kind: 'session_forked' as const, source: point.source, step: point.step };
  if (options.signal?.aborted) throw new RunError('cancelled', 'the fork was aborted before it was written');
  try {
    const stored = await log.append(EventWrite.plain(RuntimeEvent.create(invocation, fact, options.origin)));
    return {
      sessionId,
      source: point.source,
      ...(point.step === undefined ? {} : { step: point.step }),
      sequence: stored.sequence,
    };
  } catch (error) {
    if (AppendRefusedError.isInstance(error)) throw error;
    throw new RunError('persistence', `the fork of session ${from.session} could not be recorded`, {
      cause: error,
    });
  }
}
