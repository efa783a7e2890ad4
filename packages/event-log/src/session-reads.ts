import { type Kysely, sql } from 'kysely';
import { type BoundedRead, boundedRows, type EventRow, type ReadBounds, readBounded } from './log-queries.js';
import type { LogDatabase } from './log-schema.js';

type Waiting = {
  readonly sessionId: string;
  readonly bounds: ReadBounds;
  resolve(read: BoundedRead): void;
  reject(error: unknown): void;
};

/** The most sessions one read asks for; more wait for the next. */
const MAX_SESSIONS = 64;

/**
 * Reads sessions' histories on PostgreSQL, several in one statement when they wait.
 *
 * At most `readers` reads are in flight (the connections the log reads on); a read
 * asked for while they all are waits, and when one comes back every waiting session is
 * read by the next statement together — a burst of sessions new to a process (32
 * starting at once) takes two or three round trips instead of one per session through
 * the pool's few connections, and a lone read goes at once, alone. Each caller's
 * bounds are checked on its own rows, as a read of its session alone would.
 */
export class SessionReads {
  readonly #db: Kysely<LogDatabase>;
  readonly #readers: number;
  readonly #waiting: Waiting[] = [];
  #inFlight = 0;

  constructor(db: Kysely<LogDatabase>, readers: number) {
    this.#db = db;
    this.#readers = readers;
  }

  /** The session's own events within `bounds` (as `readBounded` with that session). */
  read(sessionId: string, bounds: ReadBounds): Promise<BoundedRead> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ sessionId, bounds, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#inFlight < this.#readers && this.#waiting.length > 0) {
      const batch = this.#waiting.splice(0, MAX_SESSIONS);
      this.#inFlight += 1;
      void this.#readTogether(batch).finally(() => {
        this.#inFlight -= 1;
        this.#pump();
      });
    }
  }

  async #readTogether(batch: readonly Waiting[]): Promise<void> {
    if (batch.length === 1) {
      const [one] = batch as [Waiting];
      await readBounded(this.#db, { sessionId: one.sessionId }, one.bounds).then(one.resolve, one.reject);
      return;
    }
    let bySession: Map<string, EventRow[]>;
    try {
      bySession = await this.#rowsOf(batch);
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
      return;
    }
    for (const waiting of batch) {
      try {
        const rows = bySession.get(waiting.sessionId) ?? [];
        waiting.resolve(boundedRows(rows, `session ${waiting.sessionId}`, waiting.bounds));
      } catch (error) {
        waiting.reject(error);
      }
    }
  }

  /** Each session's first rows, up to the largest bound asked plus one, in order. */
  async #rowsOf(batch: readonly Waiting[]): Promise<Map<string, EventRow[]>> {
    const ids = [...new Set(batch.map((waiting) => waiting.sessionId))];
    const limit = Math.max(...batch.map((waiting) => waiting.bounds.maxEvents)) + 1;
    const { rows } = await sql<EventRow & { asked: string }>`
      select s.asked, e.sequence, e.body, e.bytes, e.digest, e.session_digest
        from unnest(${ids}::text[]) as s(asked)
        cross join lateral (
          select sequence, body, bytes, digest, session_digest from events
           where events.session_id = s.asked order by sequence limit ${limit}
        ) as e`.execute(this.#db);
    const bySession = new Map<string, EventRow[]>();
    for (const row of rows) {
      const list = bySession.get(row.asked);
      if (list === undefined) bySession.set(row.asked, [row]);
      else list.push(row);
    }
    for (const list of bySession.values()) list.sort((a, b) => Number(a.sequence) - Number(b.sequence));
    return bySession;
  }
}
