import { EventEmitter } from 'node:events';
import type { Readable } from 'node:stream';
import { request } from 'undici';

/**
 * Aborts one request. undici takes an EventEmitter as well as an AbortSignal, and an
 * emitter is several times cheaper to make and to listen on than an AbortController:
 * one is made per attempt, and nothing else listens to it.
 */
export class RequestAbort extends EventEmitter {
  aborted = false;
  reason: unknown;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

/** A response as the executor needs it: status, headers and a body stream of bytes. */
export type HttpResponse = {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Readable;
};

/** One POST. Deadlines are the caller's: undici's own header and body timeouts are off. */
export async function postStream(
  url: string,
  init: {
    readonly headers: Readonly<Record<string, string>>;
    readonly body: string;
    readonly signal: RequestAbort;
  },
): Promise<HttpResponse> {
  const response = await request(url, {
    method: 'POST',
    headers: init.headers,
    body: init.body,
    signal: init.signal,
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  return { status: response.statusCode, headers: response.headers, body: response.body };
}
