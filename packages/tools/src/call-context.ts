import { idempotencyKeyOf, type ToolCallContext, ToolError } from '@factum/agent-facts';
import type { CommitLedger } from './commit-ledger.js';

/** A call's context and what became of its notifications. */
export type OpenCallContext = {
  readonly context: ToolCallContext;
  /** The persistence failure of a notification, if one failed: the call must not settle. */
  failure(): ToolError | undefined;
  /** Called once the call is settled (or left uncertain): later notifications are refused. */
  close(): void;
};

/**
 * The context an effect receives: its operation, the idempotency key derived from it,
 * the signal, the attempt, and `notify` recorded as `tool_notified` through the ledger.
 * A notification that cannot be committed is remembered here, so the call ends
 * uncertain even if the tool caught the error.
 */
export function openCallContext(
  ledger: CommitLedger,
  call: { readonly operationId: string; readonly signal: AbortSignal; readonly attempt: number },
): OpenCallContext {
  const { sessionId, invocationId } = ledger.invocation;
  let failed: ToolError | undefined;
  let closed = false;
  const context: ToolCallContext = {
    operationId: call.operationId,
    idempotencyKey: idempotencyKeyOf(sessionId, call.operationId),
    signal: call.signal,
    attempt: call.attempt,
    sessionId,
    invocationId,
    async notify(message: string) {
      if (closed) {
        throw new ToolError(
          'failed',
          `operation ${call.operationId} has ended: its progress is no longer recorded`,
        );
      }
      if (typeof message !== 'string')
        throw new ToolError('invalid_input', 'a progress message must be a string');
      try {
        await ledger.commit({ kind: 'tool_notified', operationId: call.operationId, message });
      } catch (error) {
        failed ??= ToolError.isInstance(error) ? error : new ToolError('persistence', String(error));
        throw failed;
      }
    },
  };
  return {
    context,
    failure: () => failed,
    close: () => {
      closed = true;
    },
  };
}
