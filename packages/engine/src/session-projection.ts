import {
  canonicalJson,
  type EventWrite,
  type LogScope,
  RuntimeEvent,
  type ToolResult,
} from '@factum/agent-facts';
import { chainLink, contentDigest } from '@factum/agent-facts/digest';
import { EMPTY_DIGEST, type EventLog, type SessionHead, stagedForm } from '@factum/event-log';
import { type ModelMessage, type ModelRequest, type ProviderConfig, RequestDigester } from '@factum/model';
import { AdmissionIndex } from './admission-index.js';
import type { ResultReader, SessionEvent } from './context-projection.js';
import { MessageProjection } from './message-projection.js';
import type { ContextBounds } from './model-turn.js';
import { catchUp } from './session-catch-up.js';

/** A session's whole history as the log holds it, with the chain head that vouches for it. */
export type SessionView = {
  readonly events: readonly SessionEvent[];
  readonly scope: LogScope;
  readonly highWater: number;
  readonly digest: string;
  /** Reads a stored tool result (from memory when this process committed it). */
  readonly readResult: ResultReader;
};

/**
 * The prompts of a history kept in memory, made incrementally while it only grows: the
 * events fed so far (the last one, to know the history is still the one fed).
 */
type Prompts = {
  readonly projection: MessageProjection;
  fed: number;
  last: SessionEvent | undefined;
};

/** Results kept in memory up to this size; larger ones are read from the log when needed. */
const KEEP_RESULT_BYTES = 64 * 1024;

/**
 * One session's history kept in memory, so a prompt is not re-read and re-parsed from
 * the log at every step. It is advanced by the facts this process commits (decoded from
 * the same canonical bytes the log stores, and chained the same way), and before every
 * use it is checked against the session's head in the log: if the high water or the
 * session digest differ, the facts after it are read and chained on when it is still a
 * prefix of the session (another writer's turn), and otherwise — a write whose outcome
 * is unknown, a fact out of order — it is dropped and re-read. The log stays the only
 * authority: a view equals `scopedPrefix` of the same session, event for event.
 */
export class SessionProjection {
  readonly #sessionId: string;
  #events: SessionEvent[] | undefined;
  #highWater = 0;
  /** The session chain's last link; undefined for an empty session. */
  #head: string | undefined;
  #bytes = 0;
  readonly #results = new Map<string, ToolResult>();
  #prompts: Prompts | undefined;
  #admission: AdmissionIndex | undefined;
  /** Digests the session's requests in the time of what each adds to the last. */
  readonly #digester = new RequestDigester();
  #system: ModelMessage | undefined;
  /** A view's check against the log's head, lent to the next view that takes it. */
  #lent = false;

  constructor(sessionId: string) {
    this.#sessionId = sessionId;
  }

  /**
   * Records a fact this process committed at `sequence`. With the session digest the log
   * gave it (`CommitReceipt.sessionDigest`), a commit that shows nothing else entered the
   * session since this history's head lends its check to the next view that takes it
   * (see `view`): the history was the whole session when that commit was made.
   */
  advance(sequence: number, write: EventWrite, sessionDigest?: string): void {
    this.#lent = false;
    const events = this.#events;
    if (events === undefined) return;
    if (sequence <= this.#highWater) {
      this.invalidate();
      return;
    }
    let bytes: number;
    let digest: string;
    let event: RuntimeEvent;
    try {
      // Decoded as the log decodes its rows, so a view equals a read event for event.
      // The log's staging already made the canonical bytes and their digest, and its
      // parse accepted the event: decoding those bytes gives the event it reads back.
      const staged = stagedForm(write.event);
      if (staged !== undefined) {
        ({ bytes, digest } = staged);
        event = JSON.parse(staged.body) as RuntimeEvent;
      } else {
        const body = canonicalJson(write.event);
        bytes = Buffer.byteLength(body);
        digest = contentDigest(body);
        event = RuntimeEvent.parse(JSON.parse(body));
      }
    } catch {
      this.invalidate();
      return;
    }
    events.push({ sequence, event });
    this.#highWater = sequence;
    this.#head = chainLink(this.#head, digest);
    this.#lent = sessionDigest !== undefined && sessionDigest === this.#head;
    this.#bytes += bytes;
    const result = write.result;
    if (result !== undefined && result.reference().bytes <= KEEP_RESULT_BYTES) {
      this.#results.set(write.event.id, result);
    }
  }

  /** Ends a loan of a check (see `view`): the next view reads the session's head. */
  endLoan(): void {
    this.#lent = false;
  }

  /** Forgets the history: the next view reads it from the log. */
  invalidate(): void {
    this.#lent = false;
    this.#events = undefined;
    this.#results.clear();
    this.#prompts = undefined;
    this.#admission = undefined;
  }

  /**
   * What admission asks of `view`'s history (as `view` just gave it), kept as the
   * history grows: fed only the events it has not seen, made again when the view does
   * not extend them (a history read again).
   */
  admission(view: SessionView): AdmissionIndex {
    const events = view.events;
    let index = this.#admission;
    if (index === undefined || events.length < index.fed || events[index.fed - 1] !== index.last) {
      index = new AdmissionIndex();
      this.#admission = index;
    }
    index.feed(events);
    return index;
  }

  /**
   * The conversation of `invocationId`'s next request over `view` (as `view` just gave
   * it), after the system text, with `pending` — a run's opening that rides along with
   * the step — as if it were logged. Equal to `projectMessages` over the same events.
   */
  async prompt(
    view: SessionView,
    invocationId: string,
    instructions: string | undefined,
    pending?: SessionEvent,
  ): Promise<ModelMessage[]> {
    const events = view.events;
    let prompts = this.#prompts;
    if (prompts === undefined || events.length < prompts.fed || events[prompts.fed - 1] !== prompts.last) {
      // The view's reader stays good while the history only grows: the results it keeps
      // are this projection's, and a fork's inherited events all come first.
      prompts = { projection: new MessageProjection(view.readResult), fed: 0, last: undefined };
      this.#prompts = prompts;
    }
    for (; prompts.fed < events.length; prompts.fed += 1) {
      const stored = events[prompts.fed]!;
      prompts.projection.ingest(stored);
      prompts.last = stored;
    }
    const lead = instructions ? [this.#systemMessage(instructions)] : [];
    if (pending === undefined) return prompts.projection.messages(invocationId, lead);
    const layer = prompts.projection.layer(view.readResult);
    layer.ingest(pending);
    return layer.messages(invocationId, lead);
  }

  /** `requestDigest` of a request of this session, in the time of what it adds to the last. */
  digest(provider: ProviderConfig, request: ModelRequest): string {
    return this.#digester.digest(provider, request);
  }

  /** The canonical body of the request `digest` last digested (`RequestDigester.body`). */
  requestBody(): string | undefined {
    return this.#digester.body();
  }

  /** One system message per text, so every prompt of the session begins with the same object. */
  #systemMessage(instructions: string): ModelMessage {
    if (this.#system?.role !== 'system' || this.#system.content !== instructions) {
      this.#system = { role: 'system', content: instructions };
    }
    return this.#system;
  }

  /**
   * The session's history within `bounds`: from memory when the log's head still
   * matches, else read again (failing with `bounds_exceeded` as the log does).
   *
   * `lend` lends this view's check to the next view that passes `take`, if no other
   * view and no fact of this process come between: admission checks the history, and
   * the run's first step, which follows it with nothing read or waited for in between,
   * builds its prompt on the same check instead of reading the head again (on
   * PostgreSQL a round trip of each turn). Either read is as old as the other: another
   * writer may write right after either. A commit of this process that shows the
   * history was the whole session lends its check the same way (see `advance`): the
   * step after a tool's settlement builds on it; a wait in between (a held handoff)
   * ends the loan (`endLoan`).
   *
   * `unchecked` takes the history in memory with no read at all when it ends where the
   * log's last commit to the session left it (`EventLog.committedHead`: nothing else
   * written through this log since), for a caller whose writes built on it commit only
   * if the session still ends there (`commitTogether`'s `onHead`): the log checks at the
   * commit what this would have read, other processes' writes included.
   */
  async view(
    log: EventLog,
    bounds: ContextBounds,
    {
      lend = false,
      take = false,
      unchecked = false,
    }: { readonly lend?: boolean; readonly take?: boolean; readonly unchecked?: boolean } = {},
  ): Promise<SessionView> {
    const lent = (this.#lent && take) || (unchecked && this.#endsAt(log.committedHead(this.#sessionId)));
    this.#lent = false;
    if (this.#events !== undefined) {
      const fits = this.#events.length <= bounds.maxEvents && this.#bytes <= bounds.maxBytes;
      if (fits && lent) {
        this.#lent = lend;
        return this.#snapshot(log);
      }
      const head = await log.sessionHead(this.#sessionId);
      // Still the whole session, or another writer's facts came after it: only they are read.
      if (fits && (this.#endsAt(head) || (await this.#catchUp(log, head, bounds)))) {
        this.#lent = lend;
        return this.#snapshot(log);
      }
    }
    this.invalidate();
    const prefix = await log.scopedPrefix({ session: this.#sessionId }, bounds);
    this.#events = [...prefix.events];
    this.#highWater = prefix.highWater;
    this.#head = prefix.events.length === 0 ? undefined : prefix.digest;
    this.#bytes = prefix.events.reduce(
      (total, { event }) => total + Buffer.byteLength(canonicalJson(event)),
      0,
    );
    this.#lent = lend;
    return this.#snapshot(log);
  }

  #digest(): string {
    return this.#head ?? EMPTY_DIGEST;
  }

  /**
   * Appends the session's events after this history up to `head`, when the history is a
   * prefix of the session as the log holds it (`catchUp`); false, with nothing changed,
   * otherwise or when a fact of this process came in the meantime.
   */
  async #catchUp(log: EventLog, head: SessionHead, bounds: ContextBounds): Promise<boolean> {
    const events = this.#events!;
    const from = { highWater: this.#highWater, link: this.#head, events: events.length, bytes: this.#bytes };
    const caught = await catchUp(log, this.#sessionId, from, head, bounds);
    if (caught === undefined || this.#events !== events || this.#highWater !== from.highWater) return false;
    events.push(...caught.events);
    this.#highWater = head.highWater;
    this.#head = caught.link;
    this.#bytes += caught.bytes;
    return true;
  }

  /** Whether the history in memory ends at `head` (the log's, or where its last commit left it). */
  #endsAt(head: SessionHead | undefined): boolean {
    return head !== undefined && head.highWater === this.#highWater && head.digest === this.#digest();
  }

  #snapshot(log: EventLog): SessionView {
    const results = this.#results;
    const sessionId = this.#sessionId;
    const events = [...this.#events!];
    // A fork's inherited results are stored under the session that settled them.
    let foreign: Map<string, string> | undefined;
    const holder = (eventId: string) => {
      foreign ??= new Map(
        events
          .filter(({ event }) => event.invocation.sessionId !== sessionId)
          .map(({ event }) => [event.id, event.invocation.sessionId]),
      );
      return foreign.get(eventId) ?? sessionId;
    };
    return {
      events,
      scope: { kind: 'session', id: sessionId },
      highWater: this.#highWater,
      digest: this.#digest(),
      readResult: async (eventId) =>
        (results.get(eventId) ?? (await log.resolveToolResult(holder(eventId), eventId))).json(),
    };
  }
}

/**
 * The projections of an engine's sessions: a live session's is always kept; of idle
 * ones, the `idle` most recently used (a session's next turn then needs no re-read).
 */
export class SessionProjections {
  readonly #idle: number;
  readonly #byId = new Map<string, SessionProjection>();
  readonly #live = new Set<string>();

  constructor(idle = 64) {
    this.#idle = idle;
  }

  /** The projection of `sessionId`, held as live until `release`. */
  hold(sessionId: string): SessionProjection {
    let projection = this.#byId.get(sessionId);
    if (projection === undefined) projection = new SessionProjection(sessionId);
    // Re-inserted: the map's order is the order of last use.
    this.#byId.delete(sessionId);
    this.#byId.set(sessionId, projection);
    this.#live.add(sessionId);
    return projection;
  }

  /** The session has no live run here any more; the oldest idle projections go. */
  release(sessionId: string): void {
    this.#live.delete(sessionId);
    let idle = this.#byId.size - this.#live.size;
    for (const id of this.#byId.keys()) {
      if (idle <= this.#idle) break;
      if (this.#live.has(id)) continue;
      this.#byId.delete(id);
      idle -= 1;
    }
  }
}
