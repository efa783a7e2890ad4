import { FactumError } from '@factum/agent-facts';

const marker = Symbol.for('@factum/server-error');

/**
 * Why the HTTP API refused a request, each with the status it answers with:
 * - `invalid_request` (400): the body, query or path does not match its schema.
 * - `malformed_json` (400): the body is not JSON.
 * - `unauthorized` (401): no bearer token, or not the server's token.
 * - `not_found` (404): no such route, session or invocation.
 * - `not_running` (409): the invocation exists but this server is not running it.
 * - `no_held_handoff` (409): commit or release without a handoff held at a safe point.
 * - `payload_too_large` (413): the body is over the server's `maxBodyBytes`.
 * - `handoff_timeout` (504): the run reached no safe point in time; the reservation is withdrawn.
 * - `no_provider` (503): the server has no model provider configured.
 * - `shutting_down` (503): the server is closing and starts nothing new.
 * - `internal` (500): anything else; the message never carries details of the cause.
 */
export type ServerErrorCode =
  | 'invalid_request'
  | 'malformed_json'
  | 'unauthorized'
  | 'not_found'
  | 'not_running'
  | 'no_held_handoff'
  | 'payload_too_large'
  | 'handoff_timeout'
  | 'no_provider'
  | 'shutting_down'
  | 'internal';

const statuses = {
  invalid_request: 400,
  malformed_json: 400,
  unauthorized: 401,
  not_found: 404,
  not_running: 409,
  no_held_handoff: 409,
  payload_too_large: 413,
  handoff_timeout: 504,
  no_provider: 503,
  shutting_down: 503,
  internal: 500,
} as const satisfies Record<ServerErrorCode, number>;

/** The HTTP statuses the API answers errors with. */
export type ErrorStatus = 400 | 401 | 404 | 409 | 413 | 500 | 503 | 504;

/** A refusal of the HTTP API, answered as `{ error: { code, message, path? } }`. */
export class ServerError extends FactumError {
  override readonly code: ServerErrorCode;
  /** Where in the input the problem is (`message`, `intent.handoffId`), for 400s. */
  readonly path: string | undefined;
  readonly [marker] = true;

  constructor(code: ServerErrorCode, message: string, options: { path?: string; cause?: unknown } = {}) {
    super(code, message, { cause: options.cause });
    this.code = code;
    this.path = options.path;
  }

  /** The status this error is answered with. */
  get status(): ErrorStatus {
    return statuses[this.code];
  }

  static override isInstance(value: unknown): value is ServerError {
    return FactumError.isInstance(value) && (value as unknown as Record<symbol, unknown>)[marker] === true;
  }
}
