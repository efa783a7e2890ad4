import type { FactOf } from '@factum/agent-facts';
import { sameJson, stepToolCalls } from '@factum/agent-facts';
import type { ModelMessage } from '@factum/model';
import {
  outcomeChange,
  projectMessages,
  type Recorded,
  type ResultReader,
  type SessionEvent,
  segmentMessages,
} from './context-projection.js';
import { joined, type MessageLists, settled } from './message-lists.js';

/** An invocation's part of a lineage, cut at `upTo`. */
type Segment = { readonly invocationId: string; readonly upTo: number };
type Opening = { readonly fact: FactOf<'invocation_opened'>; readonly previous: string | undefined };

const keyOf = (segment: Segment) => `${segment.invocationId}\u0000${segment.upTo}`;

/** Whether two messages say the same: an answer by the same parts, anything else by value. */
function sameMessage(old: ModelMessage, next: ModelMessage): boolean {
  if (old.role === 'assistant' && next.role === 'assistant' && old.parts === next.parts) return true;
  return sameJson(old, next);
}

const NONE: Promise<MessageLists> = Promise.resolve(Object.freeze([]));

/**
 * Kept lineages at most, each a few dozen lists of its history's messages (`settled`): the
 * newest serve the next steps and invocations; an older one would serve only a
 * continuation of an old run.
 */
const KEPT_LINEAGES = 8;

/**
 * `projectMessages` for a session whose events arrive one by one, in time proportional to
 * what changed rather than to the whole history: each invocation's messages are made
 * once and kept until an event of that invocation, or an outcome of a call it made,
 * changes them; the messages of a lineage are kept too, and the next invocation's prompt
 * is the kept lineage of its parent and its own messages. The messages of one step's
 * prompt are the same objects in the next step's, which is what lets a `RequestDigester`
 * hash only what a step adds.
 *
 * A `layer` sees this projection and events of its own — a replay's scratch facts over
 * the recorded history — and changes nothing below it; the projection under a layer
 * must not take events while the layer is used.
 *
 * A history the incremental rules do not cover (an invocation id opened twice, a lineage
 * that loops) is projected whole by `projectMessages`, so the result is always its result.
 */
export class MessageProjection {
  readonly #base: MessageProjection | undefined;
  readonly #read: ResultReader;
  readonly #all: SessionEvent[] = [];
  readonly #opened = new Map<string, Opening>();
  #last: string | undefined;
  readonly #events = new Map<string, SessionEvent[]>();
  readonly #outcomes = new Map<string, Recorded>();
  /** The invocations whose steps made each call: their messages carry its outcome. */
  readonly #callers = new Map<string, Set<string>>();
  readonly #segments = new Map<string, Promise<readonly ModelMessage[]>>();
  readonly #segmentKeys = new Map<string, Set<string>>();
  /** The messages last made for each segment, kept when it changes to be made again. */
  readonly #made = new Map<string, ModelMessage[]>();
  /** A layer's invocations of the projection below whose messages it changed. */
  readonly #dirty = new Set<string>();
  /** A base's kept lineages, with which invocations each depends on and which were built on it. */
  readonly #flats = new Map<string, Promise<MessageLists>>();
  readonly #flatUsers = new Map<string, Set<string>>();
  readonly #flatChildren = new Map<string, Set<string>>();
  #irregular = false;
  readonly #recordOf = (operationId: string) => this.#outcomeOf(operationId);
  #version = 0;
  readonly #baseVersion: number;

  constructor(readResult: ResultReader, base?: MessageProjection) {
    this.#read = readResult;
    this.#base = base;
    this.#baseVersion = base === undefined ? 0 : base.#version;
  }

  /** A projection over this one with events of its own, read with `readResult`. */
  layer(readResult: ResultReader): MessageProjection {
    return new MessageProjection(readResult, this);
  }

  /** Takes the next event of the session, in log order. */
  ingest(stored: SessionEvent): void {
    this.#version += 1;
    this.#all.push(stored);
    const { event } = stored;
    const id = event.invocation.invocationId;
    const own = this.#events.get(id);
    if (own === undefined) this.#events.set(id, [stored]);
    else own.push(stored);
    this.#changed(id);
    const fact = event.fact;
    if (fact.kind === 'invocation_opened') {
      if (this.#openingOf(id) !== undefined) this.#irregular = true;
      this.#opened.set(id, { fact, previous: this.#lastOpened() });
      this.#last = id;
    }
    if (fact.kind === 'model_completed') {
      for (const { operationId } of stepToolCalls(fact.stepId, fact.output.parts)) {
        const callers = this.#callers.get(operationId) ?? new Set<string>();
        callers.add(id);
        this.#callers.set(operationId, callers);
      }
    }
    const change = outcomeChange(event, this.#recordOf);
    if (change === undefined) return;
    this.#outcomes.set(change.operationId, change.recorded);
    for (const caller of this.#callersOf(change.operationId)) this.#changed(caller);
  }

  /**
   * The conversation of `invocationId`'s next request, as `projectMessages` gives it,
   * after `lead` (the request's system message): one new array, whatever the history's length.
   */
  async messages(invocationId: string, lead: readonly ModelMessage[] = []): Promise<ModelMessage[]> {
    return joined(await this.parts(invocationId, lead));
  }

  /**
   * The same conversation as lists to read one after another: `lead`, the kept lineage
   * the invocation stands on, its own messages — frozen lists, the same objects from one
   * step to the next until something in them changes (what `RequestDigester.digestParts`
   * knows by identity). A few lists, whatever the history's length.
   */
  async parts(invocationId: string, lead: readonly ModelMessage[] = []): Promise<MessageLists> {
    if (this.#base !== undefined && this.#base.#version !== this.#baseVersion) {
      throw new Error('the projection under a layer took events while the layer was in use');
    }
    const walk = this.#isIrregular()
      ? undefined
      : this.#walk({ invocationId, upTo: Number.POSITIVE_INFINITY }, 'prompt');
    const start = walk?.from === undefined ? NONE : this.#root().#flat(walk.from);
    if (walk === undefined || start === undefined) {
      return [lead, await projectMessages(this.#history(), invocationId, this.#read)];
    }
    const parts = await Promise.all(walk.segments.map((segment) => this.#segment(segment)));
    return [lead].concat(await start, parts);
  }

  /**
   * The segments of a lineage from `first` back to where a kept lineage of the base can
   * stand for the rest (`from`), newest last; nothing when the lineage loops. A prompt of
   * the base stands on its parent's lineage, kept from then on for the next steps.
   */
  #walk(
    first: Segment,
    purpose: 'prompt' | 'lineage',
  ): { segments: Segment[]; from: Segment | undefined } | undefined {
    const segments: Segment[] = [];
    const seen = new Set<string>();
    const ownIds = this.#base === undefined ? [] : [...this.#events.keys()];
    let current: Segment | undefined = first;
    while (current !== undefined) {
      if (seen.has(current.invocationId)) return undefined;
      if (segments.length > 0 && this.#servedBelow(current, seen, ownIds, purpose)) {
        return { segments: segments.reverse(), from: current };
      }
      seen.add(current.invocationId);
      segments.push(current);
      current = this.#parentOf(current.invocationId);
    }
    return { segments: segments.reverse(), from: undefined };
  }

  /**
   * Whether the lineage from `segment` back is one the base keeps: for the base, one it
   * kept (or will keep, for a prompt); for a layer, one that holds nothing of the layer — every invocation it has
   * events of was walked already, and it changed none of the base's.
   */
  #servedBelow(
    segment: Segment,
    seen: ReadonlySet<string>,
    ownIds: readonly string[],
    purpose: 'prompt' | 'lineage',
  ): boolean {
    if (this.#base === undefined) return purpose === 'prompt' || this.#flats.has(keyOf(segment));
    return (
      !this.#isLocal(segment.invocationId) && this.#dirty.size === 0 && ownIds.every((id) => seen.has(id))
    );
  }

  /** The messages of a whole lineage ending with `segment`, kept; nothing when it loops. */
  #flat(segment: Segment): Promise<MessageLists> | undefined {
    const key = keyOf(segment);
    const kept = this.#flats.get(key);
    if (kept !== undefined) return kept;
    const walk = this.#walk(segment, 'lineage');
    if (walk === undefined) return undefined;
    const from = walk.from === undefined ? undefined : this.#flats.get(keyOf(walk.from));
    const made = (async () => {
      const parts = await Promise.all(walk.segments.map((part) => this.#segment(part)));
      return settled(from === undefined ? parts : [...(await from), ...parts]);
    })();
    this.#flats.set(key, made);
    if (this.#flats.size > KEPT_LINEAGES) this.#flats.delete(this.#flats.keys().next().value!);
    for (const part of walk.segments) {
      const users = this.#flatUsers.get(part.invocationId) ?? new Set<string>();
      users.add(key);
      this.#flatUsers.set(part.invocationId, users);
    }
    if (walk.from !== undefined) {
      const parent = keyOf(walk.from);
      const children = this.#flatChildren.get(parent) ?? new Set<string>();
      children.add(key);
      this.#flatChildren.set(parent, children);
    }
    return made;
  }

  /** One invocation's messages up to the segment's end, kept by whoever sees all of them. */
  #segment(segment: Segment): Promise<readonly ModelMessage[]> {
    if (this.#base !== undefined && !this.#isLocal(segment.invocationId)) return this.#base.#segment(segment);
    const key = keyOf(segment);
    let kept = this.#segments.get(key);
    if (kept === undefined) {
      const before = this.#made.get(key) ?? [];
      kept = segmentMessages(
        this.#eventsOf(segment.invocationId),
        segment.upTo,
        this.#recordOf,
        this.#read,
      ).then((messages) => {
        // A message made again as it was is the same object: the prompts stay alike.
        const made = messages.map((message, index) => {
          const old = before[index];
          return old !== undefined && sameMessage(old, message) ? old : message;
        });
        this.#made.set(key, made);
        return Object.freeze(made);
      });
      this.#segments.set(key, kept);
      const keys = this.#segmentKeys.get(segment.invocationId) ?? new Set<string>();
      keys.add(key);
      this.#segmentKeys.set(segment.invocationId, keys);
    }
    return kept;
  }

  /** An event of `invocationId`, or an outcome of a call it made, changed its messages. */
  #changed(invocationId: string): void {
    if (this.#base !== undefined && !this.#events.has(invocationId)) this.#dirty.add(invocationId);
    const keys = this.#segmentKeys.get(invocationId);
    if (keys !== undefined) {
      for (const key of keys) this.#segments.delete(key);
      this.#segmentKeys.delete(invocationId);
    }
    const users = this.#flatUsers.get(invocationId);
    if (users !== undefined) {
      for (const key of users) this.#dropFlat(key);
      this.#flatUsers.delete(invocationId);
    }
  }

  /** Drops a kept lineage and every one built on it — also when it was itself let go already. */
  #dropFlat(key: string): void {
    this.#flats.delete(key);
    const children = this.#flatChildren.get(key);
    this.#flatChildren.delete(key);
    for (const child of children ?? []) this.#dropFlat(child);
  }

  #isLocal(invocationId: string): boolean {
    return this.#events.has(invocationId) || this.#dirty.has(invocationId);
  }

  #isIrregular(): boolean {
    if (this.#irregular || this.#base === undefined) return this.#irregular;
    return this.#base.#isIrregular();
  }

  #root(): MessageProjection {
    return this.#base ?? this;
  }

  #history(): SessionEvent[] {
    return this.#base === undefined ? this.#all : [...this.#base.#history(), ...this.#all];
  }

  #eventsOf(invocationId: string): readonly SessionEvent[] {
    const own = this.#events.get(invocationId) ?? [];
    const below = this.#base === undefined ? [] : this.#base.#eventsOf(invocationId);
    return below.length === 0 ? own : [...below, ...own];
  }

  #openingOf(invocationId: string): Opening | undefined {
    return (
      this.#opened.get(invocationId) ??
      (this.#base === undefined ? undefined : this.#base.#openingOf(invocationId))
    );
  }

  #lastOpened(): string | undefined {
    return this.#last ?? (this.#base === undefined ? undefined : this.#base.#lastOpened());
  }

  #outcomeOf(operationId: string): Recorded | undefined {
    return (
      this.#outcomes.get(operationId) ??
      (this.#base === undefined ? undefined : this.#base.#outcomeOf(operationId))
    );
  }

  #callersOf(operationId: string): Set<string> {
    const own = this.#callers.get(operationId);
    const below = this.#base === undefined ? undefined : this.#base.#callersOf(operationId);
    if (below === undefined || below.size === 0) return own ?? new Set();
    return own === undefined ? below : new Set([...below, ...own]);
  }

  /** The segment a lineage continues with before `invocationId`'s, as `lineage` finds it. */
  #parentOf(invocationId: string): Segment | undefined {
    const opening = this.#openingOf(invocationId);
    if (opening === undefined) return undefined;
    const input = opening.fact.input;
    if (input.kind === 'message') {
      return opening.previous === undefined
        ? undefined
        : { invocationId: opening.previous, upTo: Number.POSITIVE_INFINITY };
    }
    return { invocationId: input.source.invocation.invocationId, upTo: input.source.highWater };
  }
}
