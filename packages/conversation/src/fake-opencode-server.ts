import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { z } from 'zod';
import { ascendingIds } from './ascending-id.js';

// The fake is a boundary too: a prompt without the client-chosen id is a bad request.
const PromptBodySchema = z.object({
  messageID: z.string().min(1),
  parts: z.array(z.object({ id: z.string().optional(), text: z.string().optional() })).optional(),
});

/** Counters of a `FakeOpenCodeServer`, as seen at one instant. */
export type FakeOpenCodeStats = {
  /** Prompt messages received (POST /session/:id/message), re-posts included. */
  readonly messages: number;
  /** Abort requests received. */
  readonly aborts: number;
  /** Prompt answers whose body was actually written (malformed ones included). */
  readonly promptResponses: number;
  /** Times the model was asked (a re-post of an answered message does not ask it). */
  readonly modelCalls: number;
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
  /** Interval of `server.heartbeat` events (default 10 s, as the real server). */
  readonly heartbeatMs?: number;
};

type Message = { info: Record<string, unknown>; parts: Array<Record<string, unknown>> };

type Prompt = {
  readonly messageId: string;
  readonly assistantId: string;
  readonly partId: string;
  readonly assistant: Message;
  text: string;
  done: boolean;
};

const SESSION = 'ses_fake';

/**
 * A real loopback HTTP server speaking the part of the OpenCode API a conversation
 * uses, shaped like the real server (1.x): POST /session, GET /session/status,
 * POST /session/:id/message (status, headers and body only when the assistant is done;
 * a prompt posted while another runs is queued and every waiting POST is answered with
 * the session's last assistant message; a re-post of an answered message id answers
 * again without asking the model), GET /session/:id/message, POST /session/:id/abort
 * and GET /event (SSE without `id:` lines: the event id is inside the JSON; a
 * `server.heartbeat` every 10 s). A client that disconnects does not cancel its prompt.
 * Ids follow the server's scheme. Switches make it misbehave; counters say what it saw.
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
  /** Answer POST /session as a server of this version (default `1.18.33`). */
  version = '1.18.33';
  /** Answer prompts with this HTTP status and an error body instead. */
  failMessageStatus: number | undefined;
  /** Answer prompts naming this user message as the one answered (`info.parentID`). */
  answerParentId: string | undefined;
  /** List assistant messages in GET /session/:id/message (false: as if they were deleted). */
  listAnswers = true;
  /** End an aborted prompt as the server does while retrying: completed, no error, no finish. */
  abortWithoutError = false;
  promptMode: FakePromptMode;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #subscribers = new Set<ServerResponse>();
  readonly #deltas: readonly string[];
  readonly #messageWaiters: Array<{ count: number; resolve: () => void }> = [];
  readonly #newId = ascendingIds();
  readonly #messages: Message[] = [];
  readonly #answered = new Map<string, string>();
  readonly #waiting: ServerResponse[] = [];
  readonly #queue: Prompt[] = [];
  readonly #heartbeat: NodeJS.Timeout;
  #counts = { messages: 0, aborts: 0, promptResponses: 0, modelCalls: 0, active: 0, sessions: 0 };
  #prompt: Prompt | undefined;
  #nativeOverride: 'idle' | 'busy' | undefined;
  #url = '';

  private constructor(options: FakeOpenCodeServerOptions) {
    this.promptMode = options.promptMode ?? 'auto';
    this.#deltas = options.deltas ?? ['Hel', 'lo'];
    this.#server = createServer((request, response) => this.#handle(request, response));
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    this.#heartbeat = setInterval(() => this.#emit('server.heartbeat', {}), options.heartbeatMs ?? 10_000);
    this.#heartbeat.unref();
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
    if (!this.#messages.includes(prompt.assistant)) this.#messages.push(prompt.assistant);
    prompt.assistant.parts = [this.#textPart(prompt)];
    this.#emit('message.updated', { sessionID: SESSION, info: prompt.assistant.info });
    this.#emit('message.part.updated', {
      sessionID: SESSION,
      part: { id: prompt.partId, sessionID: SESSION, messageID: prompt.assistantId, type: 'text', text: '' },
    });
  }

  /** Emits one `message.part.delta` whose event id (inside the JSON) is `eventId`. */
  delta(eventId: string, messageId: string, partId: string, field: string, text: string): void {
    const prompt = this.#prompt;
    if (prompt && messageId === prompt.assistantId) {
      prompt.text += text;
      if (prompt.assistant.parts.length > 0) prompt.assistant.parts = [this.#textPart(prompt)];
    }
    this.#emit(
      'message.part.delta',
      { sessionID: SESSION, messageID: messageId, partID: partId, field, delta: text },
      eventId,
    );
  }

  /** Emits an event whose data is not JSON. */
  emitMalformedEvent(): void {
    for (const subscriber of this.#subscribers) subscriber.write('data: {"type": "message.part.delta", \n\n');
  }

  /** Ends every event stream (the connections of prompts stay open). */
  dropEventStreams(): void {
    for (const subscriber of this.#subscribers) subscriber.destroy();
  }

  /** Event streams open right now. */
  get subscribers(): number {
    return this.#subscribers.size;
  }

  /** Answers the held prompt (successfully, or malformed if switched so). */
  release(): void {
    const prompt = this.#prompt;
    if (prompt && !prompt.done) this.#complete(prompt, 'success');
  }

  /** Forgets every answer, as a server whose messages were deleted. */
  forgetAnswers(): void {
    this.#messages.splice(0, this.#messages.length);
    this.#answered.clear();
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
    clearInterval(this.#heartbeat);
    for (const subscriber of this.#subscribers) subscriber.end();
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
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
    const session = `/session/${SESSION}`;
    if (route === 'POST /session') this.#createSession(response);
    else if (route === 'GET /session/status') this.#status(response);
    else if (route === `POST ${session}/message`) this.#message(response, body);
    else if (route === `GET ${session}/message`) this.#list(response);
    else if (route === `POST ${session}/abort`) this.#abort(response);
    else if (route === 'GET /event') this.#subscribe(response);
    else json(response, { error: `no route ${route}` }, 404);
  }

  #list(response: ServerResponse): void {
    json(
      response,
      this.listAnswers ? this.#messages : this.#messages.filter((m) => m.info.role !== 'assistant'),
    );
  }

  #running(): boolean {
    return this.#prompt?.done === false || this.#queue.length > 0;
  }

  #status(response: ServerResponse): void {
    const busy = this.#nativeOverride ? this.#nativeOverride === 'busy' : this.#running();
    json(response, busy ? { [SESSION]: { type: 'busy' } } : {});
  }

  #createSession(response: ServerResponse): void {
    this.#counts.sessions += 1;
    if (this.malformedSessionBody) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"id": "ses_fake", ');
      return;
    }
    json(response, { id: SESSION, title: 'factum', version: this.version, time: { created: Date.now() } });
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
    const answered = this.#answered.get(parsed.messageID);
    if (answered !== undefined && !this.#running()) {
      // Like the real server: an answered message is answered again, the model not asked.
      this.#counts.promptResponses += 1;
      json(response, this.#messages.find((m) => m.info.id === answered) ?? {});
      return;
    }
    // Like the real server: status, headers and body only when the assistant is done.
    this.#waiting.push(response);
    const text = parsed.parts?.map((part) => part.text ?? '').join('') ?? '';
    const user = { id: parsed.messageID, sessionID: SESSION, role: 'user', time: { created: Date.now() } };
    this.#messages.push({
      info: user,
      parts: [{ id: parsed.parts?.[0]?.id ?? this.#newId('prt'), type: 'text', text }],
    });
    this.#emit('message.updated', { sessionID: SESSION, info: user });
    const prompt = this.#newPrompt(parsed.messageID);
    if (this.#running()) this.#queue.push(prompt);
    else this.#begin(prompt);
  }

  #newPrompt(messageId: string): Prompt {
    const assistantId = this.#newId('msg');
    const info = {
      id: assistantId,
      sessionID: SESSION,
      role: 'assistant',
      parentID: messageId,
      time: { created: Date.now() },
    };
    const partId = this.#newId('prt');
    return { messageId, assistantId, partId, assistant: { info, parts: [] }, text: '', done: false };
  }

  #begin(prompt: Prompt): void {
    this.#prompt = prompt;
    this.#counts.modelCalls += 1;
    // The real server reports `busy` more than once per prompt.
    this.#emit('session.status', { sessionID: SESSION, status: { type: 'busy' } });
    this.#emit('session.status', { sessionID: SESSION, status: { type: 'busy' } });
    if (this.promptMode === 'auto') {
      this.beginText();
      for (const text of this.#deltas) {
        this.delta(this.#newId('evt'), prompt.assistantId, prompt.partId, 'text', text);
      }
      this.#complete(prompt, 'success');
    }
  }

  #abort(response: ServerResponse): void {
    this.#counts.aborts += 1;
    this.#nativeOverride = undefined;
    this.#queue.splice(0, this.#queue.length);
    const prompt = this.#prompt;
    if (prompt && !prompt.done) this.#complete(prompt, 'aborted');
    json(response, true);
  }

  #complete(prompt: Prompt, how: 'success' | 'aborted'): void {
    prompt.done = true;
    const info = prompt.assistant.info;
    info.time = { created: (info.time as { created: number }).created, completed: Date.now() };
    if (how === 'success') info.finish = 'stop';
    else if (!this.abortWithoutError)
      info.error = { name: 'MessageAbortedError', data: { message: 'aborted' } };
    prompt.assistant.parts = how === 'success' || prompt.text !== '' ? [this.#textPart(prompt)] : [];
    if (!this.#messages.includes(prompt.assistant)) this.#messages.push(prompt.assistant);
    this.#answered.set(prompt.messageId, prompt.assistantId);
    this.#emit('message.updated', { sessionID: SESSION, info });
    const next = this.#queue.shift();
    if (next) {
      this.#begin(next);
      return;
    }
    // Every POST that waited is answered with the session's last assistant message.
    const last = JSON.stringify(
      this.answerParentId === undefined
        ? prompt.assistant
        : { ...prompt.assistant, info: { ...info, parentID: this.answerParentId } },
    );
    for (const response of this.#waiting.splice(0)) {
      if (response.destroyed) continue;
      this.#counts.promptResponses += 1;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(this.malformedStreamResponse && how === 'success' ? '{"info": {"id": ' : last);
    }
    this.#emit('session.status', { sessionID: SESSION, status: { type: 'idle' } });
    this.#emit('session.idle', { sessionID: SESSION });
  }

  #textPart(prompt: Prompt): Record<string, unknown> {
    return {
      id: prompt.partId,
      sessionID: SESSION,
      messageID: prompt.assistantId,
      type: 'text',
      text: prompt.text,
    };
  }

  #subscribe(response: ServerResponse): void {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    response.flushHeaders();
    this.#subscribers.add(response);
    this.#emit('server.connected', {}, undefined, response);
  }

  #emit(type: string, properties: unknown, id?: string, only?: ServerResponse): void {
    // Like the real server: no SSE `id:` line; the event id travels inside the JSON.
    const frame = `data: ${JSON.stringify({ id: id ?? this.#newId('evt'), type, properties })}\n\n`;
    for (const subscriber of only ? [only] : this.#subscribers) subscriber.write(frame);
  }
}

function json(response: ServerResponse, body: unknown, status = 200): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
