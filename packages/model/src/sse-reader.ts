import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceParser } from 'eventsource-parser';
import { ModelError } from './model-error.js';

/** One server-sent event: its `event:` name (if any) and its joined `data:` lines. */
export type SseEvent = { readonly event: string | undefined; readonly data: string };

// A single event larger than this is a broken or hostile stream, not a model answer.
const maxEventChars = 16 * 1024 * 1024;

/**
 * Bytes in, events out. Decodes UTF-8 across chunk boundaries (a multi-byte character
 * may be split anywhere) and frames events with eventsource-parser, so any chunking of
 * the same bytes yields the same events. Lines that are not SSE are a protocol error
 * rather than something to skip: they mean the body is not the stream we asked for.
 */
export class SseReader {
  // StringDecoder rather than TextDecoder: both carry a split character over to the next
  // chunk, and on Node 20 StringDecoder is about 3x faster per chunk (see the README).
  readonly #decoder = new StringDecoder('utf8');
  readonly #parser: EventSourceParser;
  #failure: ModelError | undefined;
  #sawEvent = false;

  constructor(onEvent: (event: SseEvent) => void) {
    this.#parser = createParser({
      maxBufferSize: maxEventChars,
      onEvent: (message) => {
        this.#sawEvent = true;
        onEvent({ event: message.event, data: message.data });
      },
      onError: (error) => {
        if (error.type === 'invalid-retry') return;
        this.#failure ??= new ModelError('protocol', describe(error.type, error.line ?? error.field), {
          issue: 'malformed_sse',
        });
      },
    });
  }

  /** Whether any event has been framed so far. */
  get sawEvent(): boolean {
    return this.#sawEvent;
  }

  /** Feeds raw bytes; throws the first framing error, or whatever `onEvent` threw. */
  push(bytes: Uint8Array): void {
    this.#feed(this.#decoder.write(bytes));
  }

  /** Feeds already-decoded text. */
  pushText(text: string): void {
    this.#feed(text);
  }

  /** Flushes the decoder and a last event that lacked its blank line. */
  end(): void {
    const rest = this.#decoder.end();
    if (rest !== '') this.#feed(rest);
    this.#parser.reset({ consume: true });
    if (this.#failure) throw this.#failure;
  }

  #feed(text: string): void {
    this.#parser.feed(text);
    if (this.#failure) throw this.#failure;
  }
}

function describe(type: string, line: string | undefined): string {
  if (type === 'max-buffer-size-exceeded') {
    return `the provider sent an SSE event over ${maxEventChars} characters; the stream is not a model answer`;
  }
  const shown = (line ?? '').slice(0, 120);
  return `the provider sent a line that is not server-sent events (${JSON.stringify(shown)}); check that baseUrl points at a streaming model API`;
}
