import type {
  ModelFinishReason,
  ModelObservation,
  ModelPart,
  ModelStep,
  ModelToolCall,
  ModelUsage,
} from '@factum/agent-facts';
import { emptyUsage } from '@factum/agent-facts';
import { ModelError } from './model-error.js';

/** Receives each observation as soon as it is known. */
export type ObservationSink = (observation: ModelObservation) => void;

type PendingCall = {
  readonly ordinal: number;
  id: string | undefined;
  name: string | undefined;
  arguments: string;
};
type TextKind = 'text' | 'reasoning' | 'refusal';
type PendingPart =
  | { readonly kind: TextKind; text: string }
  | { readonly kind: 'tool_call'; readonly call: PendingCall };

/** A piece of a tool call as a provider streamed it. */
export type ToolCallDelta = { readonly id?: string; readonly name?: string; readonly arguments?: string };

/**
 * Assembles one `ModelStep` from streamed deltas, whatever the wire, and emits the
 * matching observations. Parts keep their order of arrival; tool calls are keyed by
 * the provider's own index and numbered 0, 1, … in order of first appearance.
 */
export class StepBuilder {
  readonly #emit: ObservationSink;
  readonly #parts: PendingPart[] = [];
  readonly #calls = new Map<string | number, PendingCall>();
  #finishReason: ModelFinishReason | undefined;
  #usage: ModelUsage | undefined;
  #responseId: string | undefined;
  #model: string | undefined;
  #refused = false;
  #boundary = false;

  constructor(emit: ObservationSink) {
    this.#emit = emit;
  }

  get finishReason(): ModelFinishReason | undefined {
    return this.#finishReason;
  }

  get toolCallCount(): number {
    return this.#calls.size;
  }

  text(delta: string): void {
    if (delta === '') return;
    this.#append('text', delta);
    this.#emit({ kind: 'text_delta', text: delta });
  }

  reasoning(delta: string): void {
    if (delta === '') return;
    this.#append('reasoning', delta);
    this.#emit({ kind: 'reasoning_delta', text: delta });
  }

  /** The model declining to answer, in its own words: a part of its own, never text. */
  refusal(delta: string): void {
    if (delta === '') return;
    this.#refused = true;
    this.#append('refusal', delta);
    this.#emit({ kind: 'refusal_delta', text: delta });
  }

  /** Ends the current text-like part: the next delta starts a new one (a new output message). */
  boundary(): void {
    this.#boundary = true;
  }

  /** Whether a call with this provider key has been seen. */
  hasToolCall(key: string | number): boolean {
    return this.#calls.has(key);
  }

  /** The id a call with this key got, if any. */
  toolCallId(key: string | number): string | undefined {
    return this.#calls.get(key)?.id;
  }

  /** The arguments a call has accumulated so far. */
  toolCallArguments(key: string | number): string {
    return this.#calls.get(key)?.arguments ?? '';
  }

  toolCall(key: string | number, delta: ToolCallDelta): void {
    let call = this.#calls.get(key);
    if (call === undefined) {
      call = { ordinal: this.#calls.size, id: undefined, name: undefined, arguments: '' };
      this.#calls.set(key, call);
      this.#parts.push({ kind: 'tool_call', call });
    }
    if (delta.id && call.id === undefined) call.id = delta.id;
    if (delta.name && !call.name) call.name = delta.name;
    const argumentsDelta = delta.arguments ?? '';
    call.arguments += argumentsDelta;
    const observation: ModelObservation = { kind: 'tool_call_delta', index: call.ordinal, argumentsDelta };
    if (delta.id) observation.id = delta.id;
    if (delta.name) observation.name = delta.name;
    this.#emit(observation);
  }

  finish(reason: ModelFinishReason): void {
    this.#finishReason = reason;
  }

  usage(usage: ModelUsage): void {
    this.#usage = usage;
  }

  identify(ids: { readonly responseId?: unknown; readonly model?: unknown }): void {
    if (typeof ids.responseId === 'string' && ids.responseId !== '') this.#responseId ??= ids.responseId;
    if (typeof ids.model === 'string' && ids.model !== '') this.#model ??= ids.model;
  }

  /** The finished step. Tool calls without a name are a protocol error: nothing could run them. */
  build(): ModelStep {
    const parts = this.#parts.map((part): ModelPart => {
      if (part.kind !== 'tool_call') return { kind: part.kind, text: part.text };
      return { kind: 'tool_call', call: finishCall(part.call) };
    });
    let finishReason = this.#finishReason ?? 'stop';
    // Several OpenAI-compatible servers say `stop` after tool calls; the calls are what count.
    if (finishReason === 'stop' && this.#calls.size > 0) finishReason = 'tool_calls';
    // OpenAI ends a refusal with `stop`; the step must say the model declined.
    else if (finishReason === 'stop' && this.#refused) finishReason = 'refusal';
    const step: ModelStep = { parts, finishReason, usage: this.#usage ?? emptyUsage() };
    if (this.#responseId !== undefined) step.responseId = this.#responseId;
    if (this.#model !== undefined) step.model = this.#model;
    return step;
  }

  #append(kind: TextKind, delta: string): void {
    const last = this.#parts.at(-1);
    if (last?.kind === kind && !this.#boundary) last.text += delta;
    else this.#parts.push({ kind, text: delta });
    this.#boundary = false;
  }
}

function finishCall(call: PendingCall): ModelToolCall {
  if (!call.name) {
    throw new ModelError('protocol', 'the provider streamed a tool call without a function name', {
      issue: 'missing_field',
    });
  }
  // A missing id is filled deterministically so that replays of the same stream agree.
  const id = call.id ?? `call_${call.ordinal}`;
  const raw = call.arguments;
  if (raw.trim() === '') return { id, name: call.name, input: {} };
  try {
    return { id, name: call.name, input: JSON.parse(raw) };
  } catch {
    return { id, name: call.name, input: null, invalidArguments: raw };
  }
}
