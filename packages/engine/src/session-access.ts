import type { CommitReceipt, EventWrite } from '@factum/agent-facts';
import type { EventLog } from '@factum/event-log';
import type { SessionEvent } from './context-projection.js';
import type { ContextBounds } from './model-turn.js';
import type { SessionProjections } from './session-projection.js';

/**
 * How a person's command — a decision, a resolution, the view of a parked run — reads a
 * session and records its fact: through the engine's projection of the session while no
 * run of this engine holds it. A read checks the session's head and reads the log again
 * only when another writer moved it (what it returns is `scopedPrefix`'s answer, event for
 * event), and the command's own fact advances that history, so that the continuation a
 * decision leads to is admitted on it. A session with a run here is read from the log, as
 * the run's own history is the run's.
 */
export class SessionAccess {
  readonly #log: EventLog;
  readonly #projections: SessionProjections;
  readonly #bounds: ContextBounds;
  readonly #running: (sessionId: string) => boolean;

  constructor(init: {
    readonly log: EventLog;
    readonly projections: SessionProjections;
    readonly bounds: ContextBounds;
    /** Whether a run of this engine holds the session now. */
    readonly running: (sessionId: string) => boolean;
  }) {
    this.#log = init.log;
    this.#projections = init.projections;
    this.#bounds = init.bounds;
    this.#running = init.running;
  }

  /** The session's history, as the log holds it now (`bounds_exceeded` as the log's read). */
  async events(sessionId: string): Promise<readonly SessionEvent[]> {
    if (this.#running(sessionId)) {
      return (await this.#log.scopedPrefix({ session: sessionId }, this.#bounds)).events;
    }
    const projection = this.#projections.hold(sessionId);
    try {
      return (await projection.view(this.#log, this.#bounds)).events;
    } finally {
      this.#projections.release(sessionId);
    }
  }

  /** Commits a person's fact; the session's history in memory follows it. */
  async commit(write: EventWrite): Promise<CommitReceipt> {
    const receipt = await this.#log.commit(write);
    const { sessionId } = write.event.invocation;
    if (!this.#running(sessionId)) {
      this.#projections.hold(sessionId).advance(receipt.sequence, write, receipt.sessionDigest);
      this.#projections.release(sessionId);
    }
    return receipt;
  }
}
