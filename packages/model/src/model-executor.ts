import type { ModelObservation, ModelStep } from '@factum/agent-facts';
import type { ErrorContext } from './map-http-error.js';
import { mergeBody } from './merge-body.js';
import { type ModelClock, systemClock } from './model-clock.js';
import { ModelError } from './model-error.js';
import type { ModelRequest } from './model-request.js';
import { ModelStream } from './model-stream.js';
import { apiKeyOf, displayBaseUrl, endpointUrl, type ProviderConfig } from './provider-config.js';
import { type RetryOptions, RetryPolicy } from './retry-policy.js';
import { SecretRedactor } from './secret-redactor.js';
import { type AttemptTimeouts, runAttempt } from './stream-attempt.js';
import { adapterFor, type WireTarget, wireBody, wireTarget } from './wire-request.js';

/**
 * Settings of a `ModelExecutor`. Deadlines apply to each attempt:
 * - `timeoutMs`: the whole attempt, from sending to the end of the stream (`total`).
 * - `connectTimeoutMs` (default `timeoutMs`): until the response headers arrive (`connect`).
 * - `idleTimeoutMs` (default `timeoutMs`): the longest silence inside the body (`idle`).
 * A provider's `network` settings override these for its requests.
 */
export type ModelExecutorOptions = {
  readonly timeoutMs: number;
  readonly connectTimeoutMs?: number;
  readonly idleTimeoutMs?: number;
  readonly retry?: RetryOptions;
  /** Timers and pauses; tests pass one that records backoff instead of sleeping. */
  readonly clock?: ModelClock;
  /** Jitter source in [0, 1); tests pass a constant. */
  readonly random?: () => number;
};

/** Options of one streamed request. */
export type ModelStreamOptions = {
  readonly provider: ProviderConfig;
  readonly signal?: AbortSignal;
  /**
   * The request's body as text, when the caller has it already: `RequestDigester.body()`
   * right after digesting this very request with this provider (the canonical JSON of
   * `wireBody(provider, request)`). It is sent as it is, instead of mapping and
   * serialising the whole conversation again, so a long conversation costs each request
   * only what it adds, and the bytes sent are the ones the digest names.
   */
  readonly body?: string;
};

/**
 * Streams model requests to providers and normalises every wire into the same
 * observations and `ModelStep`. One executor serves any number of providers and
 * concurrent requests; it holds no connection state of its own.
 *
 * @example
 * ```ts
 * const executor = new ModelExecutor({ timeoutMs: 60_000 });
 * const stream = executor.stream(
 *   { messages: [{ role: 'user', content: 'hello' }], tools: [] },
 *   { provider: { kind: 'openai_chat_completions', model: 'my-model', baseUrl: 'https://api.openai.com/v1', auth: { apiKey } } },
 * );
 * for await (const observation of stream) console.log(observation);
 * const step = await stream.step();
 * ```
 */
export class ModelExecutor {
  readonly #timeouts: AttemptTimeouts;
  readonly #retry: RetryPolicy;
  readonly #clock: ModelClock;
  // Parsing URLs is a measurable share of a loopback request; routes repeat, so keep a few.
  readonly #routes = new Map<string, { readonly url: string; readonly display: string }>();
  readonly #contexts = new WeakMap<ProviderConfig, ErrorContext>();

  constructor(options: ModelExecutorOptions) {
    const totalMs = positive(options.timeoutMs, 'timeoutMs');
    this.#timeouts = {
      totalMs,
      connectMs: positive(options.connectTimeoutMs ?? totalMs, 'connectTimeoutMs'),
      idleMs: positive(options.idleTimeoutMs ?? totalMs, 'idleTimeoutMs'),
    };
    this.#retry = new RetryPolicy(options.retry ?? {}, options.random ?? Math.random);
    this.#clock = options.clock ?? systemClock;
  }

  /**
   * Sends `request` to `options.provider` and streams the answer. Returns at once; the
   * request is already on its way. An aborted `signal` fails the stream with
   * `cancelled` (`phase: 'before'` if nothing was sent, `'during'` otherwise) and closes
   * the connection.
   */
  stream(request: ModelRequest, options: ModelStreamOptions): ModelStream {
    return new ModelStream((emit) => this.#run(request, options, emit));
  }

  async #run(
    request: ModelRequest,
    options: ModelStreamOptions,
    emit: (observation: ModelObservation) => void,
  ): Promise<ModelStep> {
    const { provider, signal } = options;
    const route = this.#route(provider);
    // A configuration object is read-only and usually reused: its context is kept with it.
    let context = this.#contexts.get(provider);
    if (context === undefined) {
      context = new ProviderErrorContext(provider, route.display);
      this.#contexts.set(provider, context);
    }
    if (signal?.aborted) {
      throw new ModelError(
        'cancelled',
        `the request to ${context.baseUrl} was cancelled before it was sent`,
        {
          phase: 'before',
          cause: signal.reason,
        },
      );
    }
    let wire: WireTarget;
    let body: Readonly<Record<string, unknown>> | undefined;
    try {
      wire = wireTarget(provider, route.url === '' ? undefined : route.url);
      if (options.body === undefined) body = wireBody(provider, request);
    } catch {
      // The parser's message would quote the whole baseUrl, query secrets included.
      throw new ModelError(
        'bad_request',
        `could not build the request for ${context.baseUrl}: check baseUrl and the request`,
      );
    }
    const choices = provider.kind === 'openai_chat_completions' ? choicesAsked(provider, request) : undefined;
    if (typeof choices === 'number' && choices > 1) {
      throw new ModelError(
        'bad_request',
        `the request asks ${context.baseUrl} for n = ${choices} choices, but a step is one answer: remove n from providerOptions or bodyOverlay`,
      );
    }
    const bodyText = options.body ?? JSON.stringify(body);
    const adapter = adapterFor(provider.kind);
    const timeouts = this.#timeoutsFor(provider);
    let observed = false;
    const observe = (observation: ModelObservation) => {
      observed = true;
      emit(observation);
    };
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await runAttempt({
          wire,
          bodyText,
          adapter,
          context,
          clock: this.#clock,
          timeouts,
          signal,
          emit: observe,
        });
      } catch (error) {
        const failure = ModelError.isInstance(error)
          ? error
          : new ModelError('network', `the request to ${context.baseUrl} failed`, { cause: error });
        const delay = this.#retry.delayAfter(failure, attempt, observed);
        if (delay === undefined) throw failure.withAttempts(attempt);
        try {
          await this.#clock.sleep(delay, { signal });
        } catch (reason) {
          throw new ModelError(
            'cancelled',
            `the request to ${context.baseUrl} was cancelled while waiting to retry`,
            {
              phase: 'during',
              cause: reason,
              attempts: attempt,
            },
          );
        }
      }
    }
  }

  #route(provider: ProviderConfig): { readonly url: string; readonly display: string } {
    const key = `${provider.kind}\n${provider.baseUrl}`;
    let route = this.#routes.get(key);
    if (route === undefined) {
      let url = '';
      try {
        url = endpointUrl(provider.baseUrl, adapterFor(provider.kind).path);
      } catch {
        // An invalid baseUrl fails below, where the request is built, with a clear message.
      }
      route = { url, display: displayBaseUrl(provider.baseUrl) };
      if (this.#routes.size >= 64) this.#routes.clear();
      if (url !== '') this.#routes.set(key, route);
    }
    return route;
  }

  #timeoutsFor(provider: ProviderConfig): AttemptTimeouts {
    const network = provider.network ?? {};
    return {
      totalMs: network.timeoutMs ?? this.#timeouts.totalMs,
      connectMs: network.connectTimeoutMs ?? this.#timeouts.connectMs,
      idleMs: network.idleTimeoutMs ?? this.#timeouts.idleMs,
    };
  }
}

/** What errors of one provider may say; the redactor is built on first use, since only a failure needs it. */
class ProviderErrorContext implements ErrorContext {
  readonly baseUrl: string;
  readonly kind: ProviderConfig['kind'];
  readonly model: string;
  readonly hasApiKey: boolean;
  readonly #provider: ProviderConfig;
  #redactor: SecretRedactor | undefined;

  constructor(provider: ProviderConfig, baseUrl: string) {
    this.baseUrl = baseUrl;
    this.kind = provider.kind;
    this.model = provider.model;
    this.hasApiKey = apiKeyOf(provider) !== undefined;
    this.#provider = provider;
  }

  get redactor(): SecretRedactor {
    const provider = this.#provider;
    this.#redactor ??= SecretRedactor.forProvider(apiKeyOf(provider), provider.headers, provider.baseUrl);
    return this.#redactor;
  }
}

function positive(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new ModelError('bad_request', `${name} must be a positive number of milliseconds, got ${value}`);
  }
  return value;
}

/**
 * The `n` a Chat Completions body would carry: the adapter sets none, so it is what the
 * request's options and the provider's overlay give, merged as `wireBody` merges them.
 */
function choicesAsked(provider: ProviderConfig, request: ModelRequest): unknown {
  return mergeBody(mergeBody({}, request.providerOptions), provider.bodyOverlay).n;
}
