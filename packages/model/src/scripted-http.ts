import type { IncomingMessage, ServerResponse } from 'node:http';

/** A promise with its settle functions, for gates that tests open from outside. */
export type Deferred<T> = {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
};

/** A new open gate. */
export function deferred<T>(): Deferred<T> {
  let resolve: (value: T) => void = () => {};
  let reject: (error: unknown) => void = () => {};
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  // Nobody has to await a gate; whoever does still sees the rejection.
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/** The OpenAI-style error body. */
export function errorBody(type: string, message: string): Record<string, unknown> {
  return { error: { message, type } };
}

/** Sends a whole JSON response. */
export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

/** Request headers as one string per (lower-case) name. */
export function flatHeaders(headers: IncomingMessage['headers']): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

/** A request body as a JSON object, or `{}`. */
export function parseBody(text: string): Readonly<Record<string, unknown>> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Readonly<Record<string, unknown>>)
      : {};
  } catch {
    return {};
  }
}
