import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { z } from 'zod';

// The fake is a boundary too: a prompt without the client-chosen id is a bad request.
const PromptBodySchema = z.object({ messageID: z.string().min(1) });

/** Counters of a `FakeOpenCodeServer`, as seen at one instant. */
export type FakeOpenCodeStats = {
  /** Prompt messages received (POST /session/:id/message). */
  readonly messages: number;
  /** Abort requests received. */
  readonly aborts: number;
  /** Prompt answers whose body was actually written (malformed ones included). */
  readonly promptResponses: number;
  /** TCP connections open right now. */
  readonly connections: number;
  /** HTTP exchanges in progress right now (event streams included). */
  readonly active: number;
  /** Sessions created. */
  readonly sessions: number;
};

/** How the server answers a prompt: at once with a scripted reply, or only on `release()`. */
export type FakePromptMode = 'auto' | 'held';

/** Options of `FakeOpenCodeServer.start`. */
export type FakeOpenCodeServerOptions = {
  readonly promptMode?: FakePromptMode;
  /** Text deltas the assistant streams in `auto` mode (default `['Hel', 'lo']`). */
  readonly deltas?: readonly string[];
};

type Prompt = {
  readonly messageId: string;
  readonly assistantId: string;
  readonly partId: string;
  readonly response: ServerResponse;
  text: string;
  done: boolean;
};

/**
 * A real loopback HTTP server speaking the part of the OpenCode API a conversation
 * uses: POST /session, GET /session/status, POST /session/:id/message (headers at
 * once, body when the assistant is done), POST /session/:id/abort and GET /event
 * (SSE). Switches make it misbehave; counters say what it saw.
 *
 * @example
 * ```ts
 * await using server = await FakeOpenCodeServer.start({ promptMode: 'held' });
 * // ... start a prompt, then:
 * await server.waitForMessages(1);
 * server.beginText();
 * server.release();
 * ```
 */
export class FakeOpenCodeServer implements AsyncDisposable {
  /** Answer the next prompts with a body that is not JSON. */
  malformedStreamResponse = false;
  /** Answer POST /session with a body that is not JSON. */
  malformedSessionBody = false;
  /** Answer prompts with this HTTP status and an error body instead. */
  failMessageStatus: number | undefined;
  promptMode: FakePromptMode;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #subscribers = new Set<ServerResponse>();
  readonly #deltas: readonly string[];
  readonly #messageWaiters: Array<{ count: number; resolve: () => void }> = [];
  #counts = { messages: 0, aborts: 0, promptResponses: 0, active: 0, sessions: 0 };
  #prompt: Prompt | undefined;
  #nativeOverride: 'idle' | 'busy' | undefined;
  #sequence = 0;
  #url = '';

  private constructor(options: FakeOpenCodeServerOptions) {
    this.promptMode = options.promptMode ?? 'auto';
    this.#deltas = options.deltas ?? ['Hel', 'lo'];
    this.#server = createServer((request, response) => this.#handle(request, response));
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  /** Starts a server on 127.0.0.1, on a free port. */
  static async start(options: FakeOpenCodeServerOptions = {}): Promise<FakeOpenCodeServer> {
    const server = new FakeOpenCodeServer(options);
    await new Promise<void>((resolve) => server.#server.listen(0, '127.0.0.1', resolve));
    const { port } = server.#server.address() as AddressInfo;
    server.#url = `http://127.0.0.1:${port}`;
    return server;
  }

  get url(): string {
    return this.#url;
  }

  get stats(): FakeOpenCodeStats {
    return { ...this.#counts, connections: this.#sockets.size };
  }

  /** Id of the assistant message of the current (or last) prompt. */
  get assistantId(): string | undefined {
    return this.#prompt?.assistantId;
  }

  /** Resolves once `count` prompt messages have arrived. */
  waitForMessages(count: number): Promise<void> {
    if (this.#counts.messages >= count) return Promise.resolve();
    return new Promise((resolve) => this.#messageWaiters.push({ count, resolve }));
  }

  /** Starts the assistant's answer: its message and an empty text part. */
  beginText(): void {
    const prompt = this.#prompt;
    if (!prompt) throw new Error('no prompt to answer');
    this.#emit('message.updated', {
      info: {
        id: prompt.assistantId,
        sessionID: this.#session,
        role: 'assistant',
        parentID: prompt.messageId,
      },
    });
    this.#emit('message.part.updated', {
      part: {
        id: prompt.partId,
        sessionID: this.#session,
        messageID: prompt.assistantId,
        type: 'text',
        text: '',
      },
    });
  }

  /** Emits one `message.part.delta` with SSE id `eventId`. */
  delta(eventId: string, messageId: string, partId: string, field: string, text: string): void {
    if (this.#prompt && messageId === this.#prompt.assistantId) this.#prompt.text += text;
    this.#emit(
      'message.part.delta',
      { sessionID: this.#session, messageID: messageId, partID: partId, field, delta: text },
      eventId,
    );
  }

  /** Emits an event whose data is not JSON. */
  emitMalformedEvent(): void {
    for (const subscriber of this.#subscribers) subscriber.write('data: {"type": "message.part.delta", \n\n');
  }

  /** Answers the held prompt (successfully, or malformed if switched so). */
  release(): void {
    const prompt = this.#prompt;
    if (prompt && !prompt.done) this.#complete(prompt, 'success');
  }

  /** Reports the session idle whatever runs. */
  markNativeIdle(): void {
    this.#nativeOverride = 'idle';
  }

  /** Reports the session busy whatever runs (until an abort). */
  markNativeActive(): void {
    this.#nativeOverride = 'busy';
  }

  /** Ends every stream, closes every connection and stops listening. */
  async close(): Promise<void> {
    for (const subscriber of this.#subscribers) subscriber.end();
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  get #session(): string {
    return 'ses_fake';
  }

  #handle(request: IncomingMessage, response: ServerResponse): void {
    this.#counts.active += 1;
    response.on('close', () => {
      this.#counts.active -= 1;
      this.#subscribers.delete(response);
    });
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => this.#route(request, response, Buffer.concat(chunks).toString('utf8')));
  }

  #route(request: IncomingMessage, response: ServerResponse, body: string): void {
    const path = new URL(request.url ?? '/', this.#url).pathname;
    const route = `${request.method} ${path}`;
    const session = `/session/${this.#session}`;
    if (route === 'POST /session') this.#createSession(response);
    else if (route === 'GET /session/status') this.#status(response);
    else if (route === `POST ${session}/message`) this.#message(response, body);
    else if (route === `POST ${session}/abort`) this.#abort(response);
    else if (route === 'GET /event') this.#subscribe(response);
    else json(response, { error: `no route ${route}` }, 404);
  }

  #status(response: ServerResponse): void {
    const busy = this.#nativeOverride ? this.#nativeOverride === 'busy' : this.#prompt?.done === false;
    json(response, busy ? { [this.#session]: { type: 'busy' } } : {});
  }

  #createSession(response: ServerResponse): void {
    this.#counts.sessions += 1;
    if (this.malformedSessionBody) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"id": "ses_fake", ');
      return;
    }
    json(response, { id: this.#session, title: 'factum', time: { created: Date.now() } });
  }

  #message(response: ServerResponse, body: string): void {
    this.#counts.messages += 1;
    for (const waiter of this.#messageWaiters.splice(0)) {
      if (this.#counts.messages >= waiter.count) waiter.resolve();
      else this.#messageWaiters.push(waiter);
    }
    if (this.failMessageStatus !== undefined) {
      json(response, { name: 'UnknownError', data: { message: 'failed' } }, this.failMessageStatus);
      return;
    }
    let parsed: z.infer<typeof PromptBodySchema>;
    try {
      parsed = PromptBodySchema.parse(JSON.parse(body));
    } catch {
      json(response, { name: 'BadRequest' }, 400);
      return;
    }
    this.#sequence += 1;
    const prompt: Prompt = {
      messageId: parsed.messageID,
      assistantId: `msg_assistant_${this.#sequence}`,
      partId: `prt_assistant_${this.#sequence}`,
      response,
      text: '',
      done: false,
    };
    this.#prompt = prompt;
    // Like the real server: headers at once, the body when the assistant is done.
    response.writeHead(200, { 'content-type': 'application/json' });
    response.flushHeaders();
    this.#emit('message.updated', { info: { id: prompt.messageId, sessionID: this.#session, role: 'user' } });
    this.#emit('session.status', { sessionID: this.#session, status: { type: 'busy' } });
    if (this.promptMode === 'auto') {
      this.beginText();
      for (const [index, text] of this.#deltas.entries()) {
        this.delta(`evt_${this.#sequence}_${index}`, prompt.assistantId, prompt.partId, 'text', text);
      }
      this.#complete(prompt, 'success');
    }
  }

  #abort(response: ServerResponse): void {
    this.#counts.aborts += 1;
    this.#nativeOverride = undefined;
    const prompt = this.#prompt;
    if (prompt && !prompt.done) this.#complete(prompt, 'aborted');
    json(response, true);
  }

  #complete(prompt: Prompt, how: 'success' | 'aborted'): void {
    prompt.done = true;
    if (!prompt.response.destroyed) {
      this.#counts.promptResponses += 1;
      if (this.malformedStreamResponse && how === 'success') {
        prompt.response.end('{"info": {"id": ');
      } else {
        const info = {
          id: prompt.assistantId,
          sessionID: this.#session,
          role: 'assistant',
          parentID: prompt.messageId,
          time: { created: Date.now(), completed: Date.now() },
          ...(how === 'aborted'
            ? { error: { name: 'MessageAbortedError', data: { message: 'aborted' } } }
            : {}),
        };
        const parts = [
          {
            id: prompt.partId,
            sessionID: this.#session,
            messageID: prompt.assistantId,
            type: 'text',
            text: prompt.text,
          },
        ];
        prompt.response.end(JSON.stringify({ info, parts }));
      }
    }
    this.#emit('session.status', { sessionID: this.#session, status: { type: 'idle' } });
    this.#emit('session.idle', { sessionID: this.#session });
  }

  #subscribe(response: ServerResponse): void {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    response.write(`data: ${JSON.stringify({ type: 'server.connected', properties: {} })}\n\n`);
    this.#subscribers.add(response);
  }

  #emit(type: string, properties: unknown, id?: string): void {
    const frame = `${id ? `id: ${id}\n` : ''}data: ${JSON.stringify({ type, properties })}\n\n`;
    for (const subscriber of this.#subscribers) subscriber.write(frame);
  }
}

function json(response: ServerResponse, body: unknown, status = 200): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
