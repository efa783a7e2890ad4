import { type Dispatcher, getGlobalDispatcher, util } from 'undici';

/** Response headers as undici parses them (names lower case). */
export type HttpHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** Receives one exchange as it happens. Exactly one of `onEnd` and `onError` ends it. */
export interface ExchangeSink {
  onResponse(status: number, headers: HttpHeaders): void;
  onData(chunk: Buffer): void;
  onEnd(): void;
  /** The connection failed, before the response (`responded` false) or during its body. */
  onError(error: unknown, responded: boolean): void;
}

type Target = { readonly origin: string; readonly path: string };

// Routes repeat; parsing their URL is a measurable share of a loopback request.
const targets = new Map<string, Target>();

function targetOf(url: string): Target {
  let target = targets.get(url);
  if (target === undefined) {
    const parsed = new URL(url);
    target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
    if (targets.size >= 64) targets.clear();
    targets.set(url, target);
  }
  return target;
}

/**
 * One POST through undici's dispatcher (the global pool, as `undici.request` uses),
 * with the body handed over chunk by chunk as it arrives: no response stream object,
 * no per-chunk events, no abort signal. That is about half the client-side cost of a
 * streamed request on loopback. Deadlines are the caller's: undici's own header and
 * body timeouts are off.
 */
export class HttpExchange {
  readonly #sink: ExchangeSink;
  #abortRequest: ((reason: Error) => void) | undefined;
  #abortReason: Error | undefined;
  #responded = false;
  #finished = false;

  constructor(
    url: string,
    init: { readonly headers: Readonly<Record<string, string>>; readonly body: string },
    sink: ExchangeSink,
  ) {
    this.#sink = sink;
    const { origin, path } = targetOf(url);
    getGlobalDispatcher().dispatch(
      {
        origin,
        path,
        method: 'POST',
        headers: init.headers,
        body: init.body,
        headersTimeout: 0,
        bodyTimeout: 0,
      },
      this.#handler,
    );
  }

  /** Whether the response ended or failed (nothing more will arrive). */
  get finished(): boolean {
    return this.#finished;
  }

  /** Ends the exchange and closes its connection; harmless once finished. */
  abort(reason: Error): void {
    if (this.#finished) return;
    this.#finished = true;
    if (this.#abortRequest === undefined) this.#abortReason = reason;
    else this.#abortRequest(reason);
  }

  // The handler methods every undici speaks: the global dispatcher may have been made
  // by the undici inside Node (through fetch), which knows only these.
  readonly #handler = {
    onConnect: (abort: (reason: Error) => void) => {
      this.#abortRequest = abort;
      // Aborted before undici could be told: tell it now.
      if (this.#abortReason !== undefined) abort(this.#abortReason);
    },
    onHeaders: (status: number, rawHeaders: Buffer[] | string[] | null) => {
      if (this.#finished) return false;
      this.#responded = true;
      this.#sink.onResponse(status, util.parseHeaders(rawHeaders ?? []) as HttpHeaders);
      return true;
    },
    onData: (chunk: Buffer) => {
      if (!this.#finished) this.#sink.onData(chunk);
      return true;
    },
    onComplete: () => {
      if (this.#finished) return;
      this.#finished = true;
      this.#sink.onEnd();
    },
    onError: (error: Error) => {
      if (this.#finished) return;
      this.#finished = true;
      this.#sink.onError(error, this.#responded);
    },
  } satisfies Dispatcher.DispatchHandler;
}
