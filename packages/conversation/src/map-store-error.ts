import { ConversationError, type ErrorOperation, type ErrorPhase } from './conversation-error.js';
import { storeFailureOf } from './prompt-store-error.js';

/**
 * A store failure as a `ConversationError`: a definite conflict stays `conflict`;
 * anything else means the store could not answer (`integration`, service unavailable).
 */
export function mapStoreError(error: unknown, context: { operation: ErrorOperation; phase: ErrorPhase }) {
  if (ConversationError.isInstance(error)) return error;
  const conflict = storeFailureOf(error) === 'conflict';
  const what = conflict ? 'conflicted' : 'failed';
  return new ConversationError(`prompt store ${what} during ${context.phase}: ${messageOf(error)}`, {
    kind: conflict ? 'conflict' : 'integration',
    context,
    detail: conflict ? { kind: 'transaction_conflict' } : { kind: 'service_unavailable' },
    cause: error,
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
