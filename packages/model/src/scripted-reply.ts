/** A tool call a scripted answer makes. `arguments` as an array streams in those pieces. */
export type ScriptedToolCall = {
  readonly id: string;
  readonly name: string;
  readonly arguments: string | readonly string[] | Readonly<Record<string, unknown>>;
};

/** When a reply starts: after a pause, or only once the test releases it. */
export type ScriptedTiming = {
  /** Wait this long after the request arrived before answering. */
  readonly delayMs?: number;
  /** Answer nothing (not even headers) until `provider.release(n)` or the handle's `release()`. */
  readonly hold?: boolean;
};

/**
 * A streamed answer in the wire of whichever endpoint was called. Without `text` or
 * `toolCalls` it is an empty text answer. `finishReason` uses the Chat Completions
 * words (`stop`, `length`, `tool_calls`, `content_filter`) and is translated for the
 * other wires; any other word is sent as it is (to test unknown reasons).
 *
 * Faults, counted in SSE events: `truncateAfterChunks` ends the body cleanly after that
 * many events, `stallAfterChunks` sends that many and then goes silent with the
 * connection open, `resetAfterChunks` destroys the connection after that many.
 */
export type ScriptedAnswer = ScriptedTiming & {
  readonly text?: string | readonly string[];
  readonly reasoning?: string | readonly string[];
  /** The model declining, sent as each wire sends a refusal (Chat `delta.refusal`, Responses refusal parts, Anthropic stop reason `refusal`). */
  readonly refusal?: string | readonly string[];
  readonly toolCalls?: readonly ScriptedToolCall[];
  readonly finishReason?: string;
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number };
  readonly id?: string;
  /** `content-length` (default, like the seeds) or `chunked` (implied by the options below). */
  readonly transfer?: 'content-length' | 'chunked';
  readonly chunkDelayMs?: number;
  readonly truncateAfterChunks?: number;
  readonly stallAfterChunks?: number;
  readonly resetAfterChunks?: number;
};

/** An HTTP error: status, body (an object is sent as JSON) and headers such as `retry-after`. */
export type ScriptedHttpError = ScriptedTiming & {
  readonly status: number;
  readonly body?: string | Readonly<Record<string, unknown>>;
  readonly headers?: Readonly<Record<string, string>>;
};

/** Bytes sent as they are, one write per piece (chunked), for malformed-stream tests. */
export type ScriptedRaw = ScriptedTiming & {
  readonly raw: string | readonly string[];
  readonly status?: number;
  readonly contentType?: string;
  readonly chunkDelayMs?: number;
};

/** One scripted reply; the n-th reply answers the n-th request. */
export type ScriptedReply = ScriptedAnswer | ScriptedHttpError | ScriptedRaw;
