import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { Agent, request } from 'undici';
import type { z } from 'zod';
import { ConversationError, type ErrorOperation, type ErrorPhase } from './conversation-error.js';
import { firstIssue } from './first-issue.js';
import {
  type NativeStatus,
  NativeStatusEntrySchema,
  SessionAnswerSchema,
  SessionMessagesSchema,
  SessionStatusMapSchema,
} from './opencode-answer-schema.js';

/** The major version of the OpenCode server protocol this client speaks. */
export const SUPPORTED_MAJOR_VERSION = 1;

type CallOptions = { readonly signal: AbortSignal; readonly operation: ErrorOperation };

/** The parts of a prompt request sent to the server. */
export type NativeMessage = {
  readonly messageId: string;
  readonly partId: string;
  readonly text: string;
  readonly agent?: string;
  readonly model?: { readonly providerID: string; readonly modelID: string };
};

/**
 * The HTTP side of an OpenCode-style server: one undici agent owned by the backend,
 * JSON bodies parsed at the boundary, every failure a `ConversationError`.
 */
export class OpenCodeClient {
  readonly #base: string;
  readonly #agent: Agent;
  readonly #requestTimeoutMs: number;

  constructor(baseUrl: string, options: { readonly requestTimeoutMs: number }) {
    this.#base = baseUrl.replace(/\/+$/, '');
    this.#requestTimeoutMs = options.requestTimeoutMs;
    this.#agent = new Agent({ keepAliveTimeout: 1000, keepAliveMaxTimeout: 1000 });
  }

  /** POST /session; resolves to the new session's id. */
  async createSession(options: CallOptions): Promise<string> {
    const body = await this.#json('POST', '/session', { title: 'factum' }, options, 'session');
    const session = SessionAnswerSchema.safeParse(body);
    if (!session.success) {
      throw invalidAnswer('POST /session answered without a session id', session.error, options, 'session');
    }
    const { version } = session.data;
    // A server of another major version speaks another protocol: refuse it before any prompt.
    if (version !== undefined && Number.parseInt(version, 10) !== SUPPORTED_MAJOR_VERSION) {
      throw new ConversationError(
        `the agent server speaks protocol version ${version}; this client speaks ${SUPPORTED_MAJOR_VERSION}.x`,
        {
          kind: 'protocol',
          context: { operation: options.operation, phase: 'session' },
          detail: { kind: 'unsupported_version', version },
        },
      );
    }
    return session.data.id;
  }

  /** GET /session/status; a session missing from the map is idle. */
  async status(sessionId: string, options: CallOptions): Promise<NativeStatus> {
    const body = await this.#json('GET', '/session/status', undefined, options, 'cancellation');
    const map = SessionStatusMapSchema.safeParse(body);
    if (!map.success) {
      throw invalidAnswer('GET /session/status answered a non-object', map.error, options, 'cancellation');
    }
    const entry = map.data[sessionId];
    if (entry === undefined) return 'idle';
    const status = NativeStatusEntrySchema.safeParse(entry);
    if (!status.success) {
      // The entry was parsed on its own; its issues are placed back under its key.
      const { path, message } = firstIssue(status.error, [sessionId]);
      throw protocolError(
        `GET /session/status answered an unknown session status: at ${path}: ${message}`,
        options.operation,
        'cancellation',
        status.error,
      );
    }
    return status.data.type;
  }

  /** GET /session/:id/message: the session's messages, oldest first, each parsed later on its own. */
  async messages(
    sessionId: string,
    options: CallOptions & { readonly phase: ErrorPhase },
  ): Promise<unknown[]> {
    const path = `/session/${encodeURIComponent(sessionId)}/message`;
    const body = await this.#json('GET', path, undefined, options, options.phase);
    const list = SessionMessagesSchema.safeParse(body);
    if (!list.success)
      throw invalidAnswer(`GET ${path} answered a non-list`, list.error, options, options.phase);
    return list.data;
  }

  /** POST /session/:id/abort. */
  async abort(sessionId: string, options: CallOptions): Promise<void> {
    await this.#json('POST', `/session/${encodeURIComponent(sessionId)}/abort`, {}, options, 'cancellation');
  }

  /**
   * POST /session/:id/message with the client-chosen message id. The server answers
   * (status, headers and body) only when the assistant is done; resolves to the body.
   */
  async sendMessage(sessionId: string, message: NativeMessage, options: CallOptions): Promise<unknown> {
    const payload = {
      messageID: message.messageId,
      parts: [{ id: message.partId, type: 'text', text: message.text }],
      ...(message.agent ? { agent: message.agent } : {}),
      ...(message.model ? { model: message.model } : {}),
    };
    return this.#json(
      'POST',
      `/session/${encodeURIComponent(sessionId)}/message`,
      payload,
      options,
      'response',
      false,
    );
  }

  /** GET /event as parsed SSE messages, until the server closes or `signal` aborts. */
  async *events(options: CallOptions): AsyncGenerator<EventSourceMessage> {
    const response = await this.#send('GET', '/event', undefined, options, 'stream', false);
    const contentType = String(response.headers['content-type'] ?? '');
    if (response.statusCode !== 200 || !contentType.startsWith('text/event-stream')) {
      await response.body.dump().catch(() => undefined);
      throw protocolError(
        `GET /event answered ${response.statusCode} ${contentType}`,
        options.operation,
        'stream',
      );
    }
    const pending: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (event) => pending.push(event) });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body) {
        parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
        while (pending.length > 0) yield pending.shift() as EventSourceMessage;
      }
    } catch (error) {
      throw transportError(error, options, 'stream');
    } finally {
      response.body.destroy();
    }
  }

  /** Closes every connection of this client. */
  async close(): Promise<void> {
    await this.#agent.destroy();
  }

  async #json(
    method: 'GET' | 'POST',
    path: string,
    payload: unknown,
    options: CallOptions,
    phase: ErrorPhase,
    timed = true,
  ): Promise<unknown> {
    const response = await this.#send(method, path, payload, options, phase, timed);
    let text: string;
    try {
      text = await response.body.text();
    } catch (error) {
      throw transportError(error, options, phase);
    }
    if (response.statusCode >= 300) {
      throw new ConversationError(
        `${method} ${path} answered ${response.statusCode}: ${text.slice(0, 200)}`,
        {
          kind: 'integration',
          context: { operation: options.operation, phase },
          ...(response.statusCode >= 500 ? { detail: { kind: 'service_unavailable' } as const } : {}),
        },
      );
    }
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw protocolError(
        `${method} ${path} answered a body that is not JSON`,
        options.operation,
        phase,
        error,
      );
    }
  }

  async #send(
    method: 'GET' | 'POST',
    path: string,
    payload: unknown,
    options: CallOptions,
    phase: ErrorPhase,
    timed = true,
  ) {
    // Long-lived exchanges (a prompt, the event stream) are bounded by the caller's
    // deadline instead: the server may hold them open for as long as the model runs.
    const timeout = timed ? this.#requestTimeoutMs : 0;
    try {
      return await request(`${this.#base}${path}`, {
        method,
        dispatcher: this.#agent,
        signal: options.signal,
        headersTimeout: timeout,
        bodyTimeout: timeout,
        headers: payload === undefined ? {} : { 'content-type': 'application/json' },
        body: payload === undefined ? null : JSON.stringify(payload),
      });
    } catch (error) {
      throw transportError(error, options, phase);
    }
  }
}

function protocolError(message: string, operation: ErrorOperation, phase: ErrorPhase, cause?: unknown) {
  return new ConversationError(message, { kind: 'protocol', context: { operation, phase }, cause });
}

/** A protocol error naming the first field of the answer that does not parse. */
function invalidAnswer(what: string, error: z.ZodError, options: CallOptions, phase: ErrorPhase) {
  const { path, message } = firstIssue(error);
  return protocolError(`${what}: at ${path}: ${message}`, options.operation, phase, error);
}

/** An abort of our own signal is rethrown as its reason; anything else is the server's failure. */
function transportError(error: unknown, options: CallOptions, phase: ErrorPhase): unknown {
  if (options.signal.aborted) return options.signal.reason;
  if (ConversationError.isInstance(error)) return error;
  return new ConversationError(`the agent server could not be reached: ${String(error)}`, {
    kind: 'integration',
    context: { operation: options.operation, phase },
    detail: { kind: 'service_unavailable' },
    cause: error,
  });
}
