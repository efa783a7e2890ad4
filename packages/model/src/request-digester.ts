import { createHash, type Hash, randomUUID } from 'node:crypto';
import { canonicalJson, sameJson } from '@factum/agent-facts';
import {
  type ConversationWire,
  conversationWire,
  EMPTY_WRITER,
  type WriterState,
} from './conversation-wire.js';
import type { ModelMessage, ModelRequest } from './model-request.js';
import type { ProviderConfig } from './provider-config.js';
import { requestDigest, wireBody } from './wire-request.js';

/** Stands for the conversation in a body's canonical text, to cut the text around it. */
const PLACEHOLDER = `factum-conversation-${randomUUID()}`;
const PLACED = JSON.stringify(PLACEHOLDER);

/** A hash state kept every this many messages; a rewind hashes again at most as many texts. */
const MARK_EVERY = 32;

type Frame = { readonly head: string; readonly tail: string };

/** What a frame was made from: the same parts make the same frame. */
type FrameSource = {
  readonly provider: ProviderConfig;
  readonly tools: ModelRequest['tools'];
  readonly providerOptions: ModelRequest['providerOptions'];
  readonly maxOutputTokens: number | undefined;
  readonly outside: readonly ModelMessage[];
  readonly frame: Frame | undefined;
};

/**
 * `requestDigest` for the requests of one conversation that grows, in time proportional
 * to what each request adds rather than to the whole conversation: the canonical body is
 * hashed as it is written, the conversation message by message, keeping each message's
 * text and the hash state every few messages. A request whose messages begin with the
 * same messages as the last one's (the same objects, or equal ones) goes on from there;
 * one that differs from message `i` on goes back to the kept state before `i` and hashes
 * the kept texts up to `i` again. The digest is `requestDigest`'s, byte for byte, whatever
 * the request — anything the split cannot cover (an overlay replacing the conversation)
 * is digested whole.
 *
 * @example
 * ```ts
 * const digester = new RequestDigester();
 * for (const request of steps) facts.push(digester.digest(provider, request));
 * ```
 */
export class RequestDigester {
  /** What the kept states were written for: format, variant and the body around the conversation. */
  #key: { readonly kind: string; readonly variant: string; readonly head: string } | undefined;
  /** The wire of the kept states. */
  #wire: ConversationWire | undefined;
  /** The wire of the last provider, made again for another provider object. */
  #providerWire: { readonly provider: ProviderConfig; readonly wire: ConversationWire } | undefined;
  /** The messages hashed so far, the text each wrote and the writer's state after it. */
  #messages: ModelMessage[] = [];
  #texts: string[] = [];
  #writers: WriterState[] = [];
  /** `#marks[j]`: the hash state before message `j * MARK_EVERY`; `#tip`: after the last. */
  #marks: Hash[] = [];
  #tip: Hash | undefined;
  #frame: FrameSource | undefined;
  /** The frame of the request last digested, or undefined when it was digested whole. */
  #lastFrame: Frame | undefined;
  /** The parts the kept messages were given in, one after another; `undefined` for one not frozen. */
  #parts: readonly (readonly ModelMessage[] | undefined)[] = [];
  /** The messages each frozen part carries outside the conversation, and for which wire. */
  readonly #outside = new WeakMap<
    readonly ModelMessage[],
    { readonly wire: ConversationWire; readonly outside: readonly ModelMessage[] }
  >();

  /** `requestDigest(provider, request)`, in the time of what `request` adds to the last one. */
  digest(provider: ProviderConfig, request: ModelRequest): string {
    return this.digestParts(provider, request, [request.messages]);
  }

  /**
   * The digest of `request` with `parts`' messages, one part after another, as its
   * conversation (`request.messages` is not read). A frozen part the last request held
   * at the same place, after the same parts, is known by identity without a look at its
   * messages: a conversation kept as a few frozen lists that grow by new lists (a
   * session's history, then the step's own messages) is digested without a pass over
   * the whole of it.
   */
  digestParts(
    provider: ProviderConfig,
    request: Omit<ModelRequest, 'messages'>,
    parts: readonly (readonly ModelMessage[])[],
  ): string {
    const wire = this.#wireOf(provider);
    // Set again once this digest is whole: a digest that failed midway leaves no body.
    this.#lastFrame = undefined;
    const frame = this.#frameOf(wire, provider, request, parts);
    if (frame === undefined) return requestDigest(provider, { ...request, messages: parts.flat() });
    const key = this.#key;
    const variant = wire.variant(provider);
    if (key?.kind !== provider.kind || key.variant !== variant || key.head !== frame.head) {
      this.#restart({ kind: provider.kind, variant, head: frame.head }, wire);
    }
    const kept = this.#messages;
    const keptParts = this.#parts;
    let part = 0;
    let same = 0;
    // `#parts` holds only frozen parts (and `undefined` for the others): the same object is the same messages.
    for (; part < parts.length && part < keptParts.length; part += 1) {
      const next = parts[part]!;
      if (next !== keptParts[part] || same + next.length > kept.length) break;
      same += next.length;
    }
    const known = part;
    // From the first part not known by identity on, message by message: the same object,
    // or one made again with the same content (a prompt projected anew), writes the same
    // text — it is kept as is, and known by identity from then on.
    let offset = 0;
    for (; part < parts.length; part += 1, offset = 0) {
      const next = parts[part]!;
      for (; offset < next.length && same < kept.length; offset += 1, same += 1) {
        const message = next[offset]!;
        if (kept[same] === message) continue;
        if (!sameJson(kept[same], message)) break;
        kept[same] = message;
      }
      if (offset < next.length) break;
    }
    if (same < kept.length) this.#rewind(same);
    for (; part < parts.length; part += 1, offset = 0) {
      const next = parts[part]!;
      for (; offset < next.length; offset += 1) this.#append(next[offset]!);
    }
    const keptNow: (readonly ModelMessage[] | undefined)[] = parts.slice(0, known);
    for (let index = known; index < parts.length; index += 1) {
      const next = parts[index]!;
      keptNow.push(Object.isFrozen(next) ? next : undefined);
    }
    this.#parts = keptNow;
    const hash = this.#tip!.copy();
    hash.update(wire.close(this.#writers.at(-1) ?? EMPTY_WRITER));
    hash.update(frame.tail);
    this.#lastFrame = frame;
    return `sha256:${hash.digest('hex')}`;
  }

  /**
   * The text the last digest was taken of: the request's canonical body
   * (`canonicalJson(wireBody(provider, request))`), made of the texts kept for its
   * messages, with no message mapped or serialised again. Undefined when the last
   * request was digested whole (its options or the provider's overlay reach into the
   * conversation) or when nothing was digested yet. A caller that sends this very text
   * (`ModelStreamOptions.body`) sends the bytes its recorded digest names.
   */
  body(): string | undefined {
    const frame = this.#lastFrame;
    if (frame === undefined) return undefined;
    const close = this.#wire!.close(this.#writers.at(-1) ?? EMPTY_WRITER);
    return `${frame.head}${this.#texts.join('')}${close}${frame.tail}`;
  }

  /** The request's frame, made again only when what it is made of changed. */
  #frameOf(
    wire: ConversationWire,
    provider: ProviderConfig,
    request: Omit<ModelRequest, 'messages'>,
    parts: readonly (readonly ModelMessage[])[],
  ): Frame | undefined {
    const outside = wire.hasOutside ? parts.flatMap((part) => this.#outsideOf(wire, part)) : [];
    const kept = this.#frame;
    if (
      kept !== undefined &&
      kept.provider === provider &&
      kept.providerOptions === request.providerOptions &&
      kept.maxOutputTokens === request.maxOutputTokens &&
      sameItems(kept.outside, outside) &&
      sameTools(kept.tools, request.tools)
    ) {
      return kept.frame;
    }
    const frame = frameOf(wire, provider, { ...request, messages: outside });
    const { tools, providerOptions, maxOutputTokens } = request;
    this.#frame = { provider, tools, providerOptions, maxOutputTokens, outside, frame };
    return frame;
  }

  /** The messages of `part` the body carries outside the conversation, kept for a frozen part. */
  #outsideOf(wire: ConversationWire, part: readonly ModelMessage[]): readonly ModelMessage[] {
    const frozen = Object.isFrozen(part);
    const known = frozen ? this.#outside.get(part) : undefined;
    if (known?.wire === wire) return known.outside;
    const outside = part.filter((message) => wire.outside(message));
    if (frozen) this.#outside.set(part, { wire, outside });
    return outside;
  }

  /** The conversation wire of `provider`, kept for the same provider object as the frame is. */
  #wireOf(provider: ProviderConfig): ConversationWire {
    const kept = this.#providerWire;
    if (kept?.provider === provider) return kept.wire;
    const wire = conversationWire(provider);
    this.#providerWire = { provider, wire };
    return wire;
  }

  #restart(
    key: { readonly kind: string; readonly variant: string; readonly head: string },
    wire: ConversationWire,
  ): void {
    this.#key = key;
    this.#wire = wire;
    this.#messages = [];
    this.#texts = [];
    this.#writers = [];
    this.#parts = [];
    const hash = createHash('sha256');
    hash.update(key.head);
    this.#marks = [hash];
    this.#tip = hash.copy();
  }

  /** Back to the state before message `index`: the kept state before it, and the texts since. */
  #rewind(index: number): void {
    const mark = Math.floor(index / MARK_EVERY);
    this.#marks.length = mark + 1;
    const tip = this.#marks[mark]!.copy();
    for (let at = mark * MARK_EVERY; at < index; at += 1) tip.update(this.#texts[at]!);
    this.#tip = tip;
    this.#messages.length = index;
    this.#texts.length = index;
    this.#writers.length = index;
  }

  #append(message: ModelMessage): void {
    const { text, state } = this.#wire!.append(this.#writers.at(-1) ?? EMPTY_WRITER, message);
    this.#tip!.update(text);
    this.#messages.push(message);
    this.#texts.push(text);
    this.#writers.push(state);
    // The kept states are copies: the tip goes on, they stay where they were taken.
    if (this.#messages.length % MARK_EVERY === 0) this.#marks.push(this.#tip!.copy());
  }
}

/**
 * The canonical body's text before and after the conversation, or nothing when the
 * request's options or the provider's overlay reach into the conversation itself.
 * `request` holds only the messages the body carries outside the conversation.
 */
function frameOf(wire: ConversationWire, provider: ProviderConfig, request: ModelRequest): Frame | undefined {
  if (reaches(request.providerOptions, wire.key) || reaches(provider.bodyOverlay, wire.key)) return undefined;
  // Neither the options nor the overlay name the conversation's key, so it is the adapter's.
  const body = wireBody(provider, request);
  body[wire.key] = PLACEHOLDER;
  const text = canonicalJson(body);
  const at = text.indexOf(PLACED);
  if (at < 0 || text.indexOf(PLACED, at + 1) >= 0) return undefined;
  return { head: text.slice(0, at), tail: text.slice(at + PLACED.length) };
}

function sameItems<T>(kept: readonly T[], next: readonly T[]): boolean {
  return kept.length === next.length && kept.every((item, index) => item === next[index]);
}

/** Tools are made anew for each run from the same catalog: equal when their parts are the same objects. */
function sameTools(kept: ModelRequest['tools'], next: ModelRequest['tools']): boolean {
  if (kept === next) return true;
  return (
    kept.length === next.length &&
    kept.every((tool, index) => {
      const other = next[index]!;
      return (
        tool.name === other.name &&
        tool.description === other.description &&
        tool.inputSchema === other.inputSchema
      );
    })
  );
}

function reaches(options: Readonly<Record<string, unknown>> | undefined, key: string): boolean {
  return options !== undefined && Object.hasOwn(options, key);
}
