import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { ProviderConfig, ProviderKind } from './provider-config.js';
import { renderScriptedAnswer } from './render-scripted-stream.js';
import { type Deferred, deferred, errorBody, flatHeaders, parseBody, sendJson } from './scripted-http.js';
import { ScriptedProviderError } from './scripted-provider-error.js';
import type { ScriptedAnswer, ScriptedReply } from './scripted-reply.js';

/** A request body as the provider parsed it (`{}` when it was not a JSON object). */
export type ScriptedRequestBody = Readonly<Record<string, unknown>>;

/** Everything the provider saw of one request. Header names are lower case. */
export type RecordedRequest = {
  readonly index: number;
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: ScriptedRequestBody;
  readonly text: string;
};

/** Options of `startScriptedProvider`. */
export type ScriptedProviderOptions = {
  /** Replies to play from the start; more can be added with `script`. */
  readonly replies?: readonly ScriptedReply[];
  /** The path every endpoint lives under (default `/v1`). */
  readonly basePath?: string;
};

/** The handle of one scripted reply: when its request arrived, and its hold gate. */
export type ScriptHandle = {
  /** Resolves with the request this reply answers, once it has arrived. */
  arrived(): Promise<RecordedRequest>;
  /** Lets a `hold: true` reply go out (harmless for others, and before arrival). */
  release(): void;
};

type Turn = {
  readonly reply: ScriptedReply;
  readonly arrived: Deferred<RecordedRequest>;
  readonly released: Deferred<void>;
};

const kinds: readonly [string, ProviderKind][] = [
  ['/chat/completions', 'openai_chat_completions'],
  ['/responses', 'openai_responses'],
  ['/messages', 'anthropic_messages'],
];

/**
 * A real HTTP server on 127.0.0.1 that speaks the streaming wire of every provider kind
 * (by path: `/chat/completions`, `/responses`, `/messages`) and plays a script: the
 * n-th reply answers the n-th request. It records every request, can hold a reply
 * until the test releases it, and injects faults. When the script runs out it answers
 * 500 with a body that says so.
 *
 * @example
 * ```ts
 * await using provider = await startScriptedProvider();
 * provider.script({ toolCalls: [{ id: 'call-1', name: 'echo', arguments: { value: 42 } }] }, { text: 'done', hold: true });
 * const executor = new ModelExecutor({ timeoutMs: 5_000 });
 * // … run something that calls provider.config() twice …
 * await provider.requestArrived(1);
 * provider.release(1);
 * ```
 */
export class ScriptedProvider implements AsyncDisposable {
  readonly #server: Server;
  readonly #basePath: string;
  readonly #turns: Turn[] = [];
  readonly #recorded: RecordedRequest[] = [];
  readonly #arrivals = new Map<number, Deferred<RecordedRequest>>();
  readonly #requestTurns = new Map<number, Turn>();
  readonly #preReleased = new Set<number>();
  readonly #sockets = new Map<Socket, Deferred<void>>();
  readonly #requestSockets: Socket[] = [];
  readonly #timers = new Set<() => void>();
  #next = 0;
  #closed = false;
  #connections = 0;

  private constructor(server: Server, basePath: string) {
    this.#server = server;
    this.#basePath = basePath;
    server.on('connection', (socket: Socket) => {
      this.#connections += 1;
      const closed = deferred<void>();
      this.#sockets.set(socket, closed);
      socket.on('close', () => closed.resolve());
    });
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      this.#handle(request, response).catch(() => response.destroy());
    });
  }

  /** Starts a provider on 127.0.0.1 and a free port. */
  static async start(options: ScriptedProviderOptions = {}): Promise<ScriptedProvider> {
    const provider = new ScriptedProvider(createServer(), options.basePath ?? '/v1');
    provider.script(...(options.replies ?? []));
    await new Promise<void>((resolve, reject) => {
      provider.#server.once('error', reject);
      provider.#server.listen(0, '127.0.0.1', () => resolve());
    });
    return provider;
  }

  /** The API root to put in a `ProviderConfig`, e.g. `http://127.0.0.1:41234/v1`. */
  get baseUrl(): string {
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}${this.#basePath}`;
  }

  /** The parsed body of every request so far, in order of arrival. */
  get requests(): readonly ScriptedRequestBody[] {
    return this.#recorded.map((record) => record.body);
  }

  /** Every request so far with its method, path, headers and raw text. */
  get recorded(): readonly RecordedRequest[] {
    return [...this.#recorded];
  }

  /** How many TCP connections clients opened (keep-alive reuses them). */
  get connectionCount(): number {
    return this.#connections;
  }

  /** How many scripted replies have not been used yet. */
  get pending(): number {
    return this.#turns.length - this.#next;
  }

  /** Appends replies to the script; returns one handle per reply. */
  script(...replies: readonly ScriptedReply[]): ScriptHandle[] {
    return replies.map((reply) => {
      const turn: Turn = { reply, arrived: deferred(), released: deferred() };
      this.#turns.push(turn);
      return { arrived: () => turn.arrived.promise, release: () => turn.released.resolve() };
    });
  }

  /** Resolves with the body of request `n` (0-based) once it has arrived. */
  async requestArrived(
    n: number,
    options: { readonly signal?: AbortSignal } = {},
  ): Promise<ScriptedRequestBody> {
    if (n < 0) throw new ScriptedProviderError(`request index ${n} is negative; requests count from 0`);
    const existing = this.#recorded[n];
    if (existing !== undefined) return existing.body;
    if (this.#closed) throw new ScriptedProviderError(`the provider closed before request #${n} arrived`);
    let arrival = this.#arrivals.get(n);
    if (arrival === undefined) {
      arrival = deferred();
      this.#arrivals.set(n, arrival);
    }
    const { signal } = options;
    if (signal === undefined) return (await arrival.promise).body;
    signal.throwIfAborted();
    const aborted = new Promise<never>((_, reject) =>
      signal.addEventListener('abort', () => reject(signal.reason)),
    );
    aborted.catch(() => {});
    return (await Promise.race([arrival.promise, aborted])).body;
  }

  /** Lets the held reply of request `n` (0-based) go out; before it arrives, it will not be held. */
  release(n: number): void {
    const turn = this.#requestTurns.get(n);
    if (turn === undefined) this.#preReleased.add(n);
    else turn.released.resolve();
  }

  /** Resolves when the connection that carried request `n` has closed. */
  socketClosed(n: number): Promise<void> {
    const socket = this.#requestSockets[n];
    const closed = socket === undefined ? undefined : this.#sockets.get(socket);
    if (closed === undefined)
      return Promise.reject(new ScriptedProviderError(`request #${n} has not arrived`));
    return closed.promise;
  }

  /** A provider configuration pointing here (chat completions, key `test-key`, model `test`). */
  config(overrides: Partial<ProviderConfig> = {}): ProviderConfig {
    return {
      kind: 'openai_chat_completions',
      model: 'test',
      baseUrl: this.baseUrl,
      auth: { apiKey: 'test-key' },
      ...overrides,
    };
  }

  /** Closes every connection (held and stalled replies included) and stops listening. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const cancel of this.#timers) cancel();
    for (const turn of this.#turns) turn.released.resolve();
    for (const arrival of this.#arrivals.values()) {
      arrival.reject(new ScriptedProviderError('the provider closed before the request arrived'));
    }
    const stopped = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    await stopped;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const index = this.#recorded.length;
    const record: RecordedRequest = {
      index,
      method: request.method ?? 'GET',
      path: request.url ?? '/',
      headers: flatHeaders(request.headers),
      body: parseBody(text),
      text,
    };
    this.#recorded.push(record);
    this.#requestSockets.push(request.socket);
    const turn = this.#turns[this.#next];
    if (turn !== undefined) {
      this.#next += 1;
      this.#requestTurns.set(index, turn);
      if (this.#preReleased.delete(index)) turn.released.resolve();
      turn.arrived.resolve(record);
    }
    this.#arrivals.get(index)?.resolve(record);
    const kind = kinds.find(([suffix]) => record.path.split('?')[0]?.endsWith(suffix))?.[1];
    if (turn === undefined) return this.#exhausted(response, record);
    if (kind === undefined)
      return sendJson(
        response,
        404,
        errorBody('not_found', `scripted provider: no endpoint at ${record.path}`),
      );
    const socketClosed = this.#sockets.get(request.socket)?.promise ?? Promise.resolve();
    const { reply } = turn;
    if (reply.delayMs !== undefined) await this.#sleep(reply.delayMs);
    if (reply.hold) await Promise.race([turn.released.promise, socketClosed]);
    if (this.#closed || response.destroyed) return;
    if ('raw' in reply) {
      response.writeHead(reply.status ?? 200, { 'content-type': reply.contentType ?? 'text/event-stream' });
      const raw = typeof reply.raw === 'string' ? [reply.raw] : reply.raw;
      return this.#writeEvents(response, raw, { chunkDelayMs: reply.chunkDelayMs });
    }
    if ('status' in reply) {
      const body = reply.body ?? errorBody('scripted', `scripted ${reply.status}`);
      const isText = typeof body === 'string';
      response.writeHead(reply.status, {
        'content-type': isText ? 'text/plain; charset=utf-8' : 'application/json',
        ...reply.headers,
      });
      response.end(isText ? body : JSON.stringify(body));
      return;
    }
    const { body } = record;
    const streamOptions = body.stream_options as { include_usage?: unknown } | undefined;
    const rendered = renderScriptedAnswer(kind, reply, {
      model: typeof body.model === 'string' ? body.model : 'test',
      includeUsage: streamOptions?.include_usage === true,
    });
    // A request that did not ask for a stream gets the whole answer as JSON, as real servers do.
    if (body.stream !== true) return sendJson(response, 200, rendered.json);
    return this.#writeAnswer(response, rendered.events, reply);
  }

  async #writeAnswer(
    response: ServerResponse,
    events: readonly string[],
    answer: ScriptedAnswer,
  ): Promise<void> {
    const chunked =
      answer.transfer === 'chunked' ||
      answer.chunkDelayMs !== undefined ||
      answer.truncateAfterChunks !== undefined ||
      answer.stallAfterChunks !== undefined ||
      answer.resetAfterChunks !== undefined;
    if (!chunked) {
      const body = events.join('');
      response.writeHead(200, {
        'content-type': 'text/event-stream',
        'content-length': Buffer.byteLength(body),
      });
      response.end(body);
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    response.flushHeaders();
    await this.#writeEvents(response, events, answer);
  }

  async #writeEvents(
    response: ServerResponse,
    events: readonly string[],
    faults: Pick<
      ScriptedAnswer,
      'chunkDelayMs' | 'truncateAfterChunks' | 'stallAfterChunks' | 'resetAfterChunks'
    >,
  ): Promise<void> {
    for (const [position, event] of events.entries()) {
      if (this.#closed || response.destroyed) return;
      if (position === faults.truncateAfterChunks) break;
      // Stalling leaves the connection open and silent; close() or the client ends it.
      if (position === faults.stallAfterChunks) return;
      if (position === faults.resetAfterChunks) {
        response.socket?.destroy();
        return;
      }
      // Waiting for each write to flush keeps a later reset or stall from swallowing it.
      await new Promise<void>((resolve) => response.write(event, () => resolve()));
      if (faults.chunkDelayMs !== undefined && position < events.length - 1)
        await this.#sleep(faults.chunkDelayMs);
    }
    if (!response.destroyed) response.end();
  }

  #exhausted(response: ServerResponse, record: RecordedRequest): void {
    const message = `scripted provider: the script is exhausted, no reply for request #${record.index} (${record.method} ${record.path}); add one with provider.script(...)`;
    sendJson(response, 500, errorBody('script_exhausted', message));
  }

  #sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const cancel = () => {
        clearTimeout(handle);
        this.#timers.delete(cancel);
        resolve();
      };
      const handle = setTimeout(cancel, ms);
      this.#timers.add(cancel);
    });
  }
}

/**
 * Starts a scripted provider on 127.0.0.1 and a free port. See `ScriptedProvider`.
 *
 * @example
 * ```ts
 * await using provider = await startScriptedProvider({ replies: [{ text: 'done' }] });
 * const step = await new ModelExecutor({ timeoutMs: 5_000 })
 *   .stream({ messages: [{ role: 'user', content: 'hi' }], tools: [] }, { provider: provider.config() })
 *   .step();
 * ```
 */
export function startScriptedProvider(options: ScriptedProviderOptions = {}): Promise<ScriptedProvider> {
  return ScriptedProvider.start(options);
}
