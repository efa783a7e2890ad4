import type { ScriptedAnswer, ScriptedToolCall } from './scripted-reply.js';

/** An answer in one wire: its SSE events (each a whole `…\n\n` block) and its JSON body. */
export type RenderedAnswer = {
  readonly events: string[];
  readonly json: Record<string, unknown>;
};

/** What the request asked for that changes the shape of the answer. */
export type RenderRequest = {
  readonly model: string;
  /** Chat Completions `stream_options.include_usage`. */
  readonly includeUsage: boolean;
};

/** Text given as one string or as the pieces to stream it in. */
export function pieces(value: string | readonly string[] | undefined): readonly string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : value;
}

/** The argument pieces of a call: a string, the pieces given, or the JSON of an object. */
export function argumentPieces(call: ScriptedToolCall): readonly string[] {
  const value = call.arguments;
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value as readonly string[];
  return [JSON.stringify(value)];
}

/** Token counts of an answer (4 in, 3 out unless scripted). */
export function usageOf(answer: ScriptedAnswer): { input: number; output: number } {
  return { input: answer.usage?.inputTokens ?? 4, output: answer.usage?.outputTokens ?? 3 };
}

/** The Chat Completions finish reason an answer ends with. */
export function finishReasonOf(answer: ScriptedAnswer): string {
  return answer.finishReason ?? ((answer.toolCalls?.length ?? 0) > 0 ? 'tool_calls' : 'stop');
}

/** A `data:` event, as Chat Completions sends them. */
export const dataEvent = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`;

/** A named event whose data repeats the name as `type`, as Responses and Anthropic send them. */
export const namedEvent = (type: string, value: Record<string, unknown>): string =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...value })}\n\n`;
