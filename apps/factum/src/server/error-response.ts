import { RunError, type RunErrorCode } from '@factum/engine';
import { type AppendRefusal, AppendRefusedError } from '@factum/event-log';
import type { Context } from 'hono';
import { type ErrorStatus, ServerError } from './server-error.js';

/** The JSON every refusal is answered with. */
export type ErrorBody = {
  readonly error: { readonly code: string; readonly message: string; readonly path?: string };
};

const runStatuses = {
  busy: 409,
  sealed: 409,
  fingerprint_mismatch: 409,
  handoff_mismatch: 409,
  uncertain_operations: 409,
  unknown_source: 409,
  cancelled: 409,
  handoff_unavailable: 409,
  invalid_input: 400,
  persistence: 503,
  lease_lost: 503,
  approval_pending: 409,
  approval_unknown: 404,
  approval_decided_twice: 409,
  already_executed: 409,
  approval_input_mismatch: 409,
  not_uncertain: 409,
  duplicate_invocation: 409,
  idempotency_conflict: 409,
} as const satisfies Record<RunErrorCode, ErrorStatus>;

/** The log's refusals of a fork, answered with their own code (see `fork-routes.ts`). */
const forkStatuses: Partial<Record<AppendRefusal, ErrorStatus>> = {
  unknown_session: 404,
  invalid_boundary: 409,
  source_live: 409,
  session_exists: 409,
};

/**
 * Answers an error thrown by a route. Our own typed refusals keep their code and
 * message; anything else is a 500 whose message says nothing of the cause, so no
 * detail of a provider or a secret can leak through an error.
 */
export function errorResponse(c: Context, error: unknown): Response {
  if (ServerError.isInstance(error)) {
    const path = error.path === undefined ? {} : { path: error.path };
    return c.json<ErrorBody>({ error: { code: error.code, message: error.message, ...path } }, error.status);
  }
  if (RunError.isInstance(error)) {
    return c.json<ErrorBody>(
      { error: { code: error.code, message: error.message } },
      runStatuses[error.code],
    );
  }
  const forkStatus = AppendRefusedError.isInstance(error) ? forkStatuses[error.code] : undefined;
  if (forkStatus !== undefined) {
    return c.json<ErrorBody>(
      { error: { code: (error as AppendRefusedError).code, message: (error as AppendRefusedError).message } },
      forkStatus,
    );
  }
  return c.json<ErrorBody>(
    { error: { code: 'internal', message: 'the server failed to answer this request' } },
    500,
  );
}
