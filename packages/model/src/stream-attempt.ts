import type { ModelObservation, ModelStep } from '@factum/agent-facts';
import { type ExchangeSink, HttpExchange, type HttpHeaders } from './http-transport.js';
import { type ErrorContext, mapHttpError, mapStreamError } from './map-http-error.js';
import type { ModelClock } from './model-clock.js';
import { ModelError } from './model-error.js';
import type { ProviderAdapter, StreamDecoder } from './provider-adapter.js';
import { SseReader } from './sse-reader.js';
import { StepBuilder } from './step-builder.js';
import { asObject, quote } from './wire-json.js';
import type { WireTarget } from './wire-request.js';

/** The three deadlines of one attempt, in milliseconds. */
export type AttemptTimeouts = {
  readonly connectMs: number;
  readonly idleMs: number;
  readonly totalMs: number;
};

/** Everything one attempt needs. */
export type AttemptSettings = {
  readonly wire: WireTarget;
  readonly bodyText: string;
  readonly adapter: ProviderAdapter;
  readonly context: ErrorContext;
  readonly clock: ModelClock;
  readonly timeouts: AttemptTimeouts;
  readonly signal: AbortSignal | undefined;
  readonly emit: (observation: ModelObservation) => void;
};

// Error and non-stream bodies are read only this far: enough for any provider message.
const maxErrorBody = 64 * 1024;
const endGraceMs = 1000;

/** Sends one request and reads its stream to a step, or fails with one `ModelError`. */
export function runAttempt(settings: AttemptSettings): Promise<ModelStep> {
  return new StreamAttempt(settings).promise;
}

// How the body of a response is read: as a stream, or whole (bounded) to make an error of.
type BodyMode =
  | { readonly kind: 'stream' }
  | { readonly kind: 'whole'; text: string; readonly toError: (text: string) => ModelError };

class StreamAttempt implements ExchangeSink {
  readonly promise: Promise<ModelStep>;
  readonly #settings: AttemptSettings;
  #exchange: HttpExchange | undefined;
  #mode: BodyMode = { kind: 'stream' };
  readonly #decoder: StreamDecoder;
  readonly #reader: SseReader;
  #resolve: (step: ModelStep) => void = () => {};
  #reject: (error: ModelError) => void = () => {};
  #settled = false;
  #lastActivity: number;
  #phase: 'connect' | 'body' | 'ending' = 'connect';
  readonly #startedAt: number;
  #graceAt = Number.POSITIVE_INFINITY;
  #timerAt = Number.POSITIVE_INFINITY;
  #cancelTimer: () => void = () => {};
  #firstBytes = true;

  constructor(settings: AttemptSettings) {
    this.#settings = settings;
    this.#decoder = settings.adapter.decoder(new StepBuilder(settings.emit), settings.context);
    this.#reader = new SseReader((event) => this.#decoder.event(event));
    this.#startedAt = settings.clock.now();
    this.#lastActivity = this.#startedAt;
    this.promise = new Promise<ModelStep>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#start();
  }

  #start(): void {
    const { signal, context, wire, bodyText } = this.#settings;
    signal?.addEventListener('abort', this.#onAbort, { once: true });
    this.#schedule();
    try {
      this.#exchange = new HttpExchange(wire.url, { headers: wire.headers, body: bodyText }, this);
    } catch (error) {
      this.#fail(connectionError(error, context, 'before'));
    }
  }

  readonly #onAbort = () => {
    this.#fail(
      new ModelError(
        'cancelled',
        `the request to ${this.#settings.context.baseUrl} was cancelled while in flight`,
        {
          phase: 'during',
          cause: this.#settings.signal?.reason,
        },
      ),
    );
  };

  /** @internal The status and headers arrived: decide how to read the body. */
  onResponse(status: number, headers: HttpHeaders): void {
    if (this.#settled) return;
    const { context } = this.#settings;
    this.#phase = 'body';
    this.#touch();
    this.#schedule();
    const type = String(headers['content-type'] ?? '').toLowerCase();
    if (status < 200 || status >= 300) {
      this.#readWhole((text) => mapHttpError({ status, headers, body: text }, context, Date.now()));
    } else if (type.includes('text/html')) {
      this.#readWhole((text) => htmlError(context, text));
    } else if (type.includes('application/json')) {
      this.#readWhole((text) => jsonBodyError(context, text));
    }
  }

  /** @internal A piece of the body. */
  onData(chunk: Buffer): void {
    if (this.#settled) return;
    this.#touch();
    const mode = this.#mode;
    if (mode.kind === 'whole') {
      mode.text += chunk.toString('utf8');
      if (mode.text.length >= maxErrorBody) this.#fail(mode.toError(mode.text));
      return;
    }
    try {
      if (this.#firstBytes) {
        this.#firstBytes = false;
        // A proxy's or gateway's HTML page with a streaming content type.
        if (/^\s*</.test(chunk.subarray(0, 64).toString('latin1'))) {
          this.#readWhole((text) => htmlError(this.#settings.context, text), chunk.toString('utf8'));
          return;
        }
      }
      this.#reader.push(chunk);
      if (this.#decoder.complete) this.#armGrace();
    } catch (error) {
      this.#fail(asModelError(error, this.#settings.context));
    }
  }

  /** @internal The body ended cleanly. */
  onEnd(): void {
    if (this.#settled) return;
    const mode = this.#mode;
    if (mode.kind === 'whole') {
      this.#fail(mode.toError(mode.text));
      return;
    }
    try {
      this.#reader.end();
      this.#succeed();
    } catch (error) {
      this.#fail(asModelError(error, this.#settings.context));
    }
  }

  /** @internal The connection failed. */
  onError(error: unknown, responded: boolean): void {
    if (this.#settled) return;
    const mode = this.#mode;
    // An error body cut short still says more than the broken connection.
    if (mode.kind === 'whole') this.#fail(mode.toError(mode.text));
    else this.#fail(connectionError(error, this.#settings.context, responded ? 'during' : 'before'));
  }

  #readWhole(toError: (text: string) => ModelError, prefix = ''): void {
    this.#mode = { kind: 'whole', text: prefix, toError };
  }

  #touch(): void {
    this.#lastActivity = this.#settings.clock.now();
  }

  // One timer for all three deadlines, re-armed only when it fires: a chunk just moves
  // the idle deadline, so the per-chunk cost is a clock read, not a timer.
  #schedule(): void {
    const { timeouts } = this.#settings;
    let next = this.#startedAt + timeouts.totalMs;
    if (this.#phase === 'connect') next = Math.min(next, this.#startedAt + timeouts.connectMs);
    if (this.#phase === 'body') next = Math.min(next, this.#lastActivity + timeouts.idleMs);
    if (this.#phase === 'ending') next = Math.min(next, this.#graceAt);
    if (next >= this.#timerAt) return;
    this.#cancelTimer();
    this.#timerAt = next;
    this.#cancelTimer = this.#settings.clock.setTimer(Math.max(1, next - this.#settings.clock.now()), () => {
      this.#timerAt = Number.POSITIVE_INFINITY;
      this.#onTimer();
    });
  }

  #onTimer(): void {
    if (this.#settled) return;
    const outcome = this.#expired();
    if (outcome === 'succeed') this.#succeed();
    else if (outcome !== undefined) this.#fail(outcome);
    else this.#schedule();
  }

  // Which deadline has passed, if any. Connect is checked first so that, when all
  // deadlines are equal, the most specific phase is the one reported.
  #expired(): ModelError | 'succeed' | undefined {
    const { clock, timeouts, context } = this.#settings;
    // Timers may fire a hair early against the clock; a millisecond of slack avoids a spin.
    const now = clock.now() + 1;
    if (this.#phase === 'connect' && now >= this.#startedAt + timeouts.connectMs) {
      return new ModelError(
        'timeout',
        `no response headers from ${context.baseUrl} within ${timeouts.connectMs} ms; check that the server is up, or raise connectTimeoutMs`,
        { phase: 'connect' },
      );
    }
    if (this.#phase === 'ending' && now >= this.#graceAt) return 'succeed';
    if (this.#phase === 'body' && now >= this.#lastActivity + timeouts.idleMs) {
      return new ModelError(
        'timeout',
        `the stream from ${context.baseUrl} stalled: no bytes for ${timeouts.idleMs} ms; raise idleTimeoutMs if the model thinks long before answering`,
        { phase: 'idle' },
      );
    }
    if (now < this.#startedAt + timeouts.totalMs) return undefined;
    if (this.#decoder.complete) return 'succeed';
    return new ModelError(
      'timeout',
      `the request to ${context.baseUrl} took longer than ${timeouts.totalMs} ms; raise timeoutMs for long answers`,
      { phase: 'total' },
    );
  }

  // After the terminal event, wait briefly for the server to end the body cleanly (which
  // keeps the connection reusable) before closing it ourselves.
  #armGrace(): void {
    if (this.#phase === 'ending') return;
    this.#phase = 'ending';
    this.#graceAt = this.#settings.clock.now() + endGraceMs;
    this.#schedule();
  }

  #succeed(): void {
    if (this.#settled) return;
    let step: ModelStep;
    try {
      step = this.#decoder.finish();
    } catch (error) {
      this.#fail(asModelError(error, this.#settings.context));
      return;
    }
    this.#settled = true;
    this.#cleanup();
    // After the grace period the server still had not ended the body: close it.
    // A body that ended cleanly needs no abort, nor the error built to give its reason.
    const exchange = this.#exchange;
    if (exchange !== undefined && !exchange.finished) exchange.abort(new Error('the answer was complete'));
    this.#resolve(step);
  }

  #fail(failure: ModelError): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#cleanup();
    // Every error passes here, so this is the one place provider text gets redacted.
    const error = failure.redacted((text) => this.#settings.context.redactor.redact(text));
    // Aborting closes the connection, so a stalled or cancelled server sees it go.
    this.#exchange?.abort(error);
    this.#reject(error);
  }

  #cleanup(): void {
    this.#cancelTimer();
    this.#settings.signal?.removeEventListener('abort', this.#onAbort);
  }
}

function asModelError(error: unknown, context: ErrorContext): ModelError {
  if (ModelError.isInstance(error)) return error;
  return new ModelError('protocol', `could not read the stream from ${context.baseUrl}: ${describe(error)}`, {
    issue: 'malformed_sse',
    cause: error,
  });
}

function connectionError(error: unknown, context: ErrorContext, when: 'before' | 'during'): ModelError {
  if (ModelError.isInstance(error)) return error;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new ModelError(
      'timeout',
      `could not connect to ${context.baseUrl} in time; check baseUrl and the network`,
      {
        phase: 'connect',
        cause: error,
      },
    );
  }
  const what =
    when === 'before'
      ? `could not reach ${context.baseUrl}`
      : `the connection to ${context.baseUrl} broke mid-stream`;
  return new ModelError(
    'network',
    `${what}: ${describe(error)}; check baseUrl and that the server is running`,
    {
      cause: error,
    },
  );
}

function htmlError(context: ErrorContext, text: string): ModelError {
  const title = /<title>([^<]*)<\/title>/i.exec(text)?.[1]?.trim();
  return new ModelError(
    'protocol',
    `${context.baseUrl} answered with an HTML page${title ? ` ("${context.redactor.redact(title)}")` : ''} instead of a stream; check that baseUrl is the API root (e.g. ending in /v1), not a web page or a login proxy`,
    { issue: 'html_body' },
  );
}

function jsonBodyError(context: ErrorContext, text: string): ModelError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const error = asObject(parsed)?.error;
  if (error !== undefined) return mapStreamError(error, context);
  return new ModelError(
    'protocol',
    `${context.baseUrl} answered with plain JSON instead of a stream (${quote(context.redactor.redact(text))}); the server may not support stream: true`,
    { issue: 'not_a_stream' },
  );
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? `${code} (${error.message})` : error.message;
  }
  return String(error);
}
