import type { FactError, ToolCallContext } from '@factum/agent-facts';

/** An operation left uncertain: dispatched, and never settled. */
export type UncertainOperation = {
  readonly operationId: string;
  readonly name: string;
  readonly input: unknown;
};

/** What a reconciler found when it looked at the world. */
export type ReconcileDecision =
  | { readonly kind: 'succeeded'; readonly value: unknown }
  | { readonly kind: 'failed'; readonly error: FactError }
  | { readonly kind: 'unknown'; readonly note: string };

/**
 * How an uncertain operation of a tool may be closed after a crash:
 * - `never_auto_retry` (the default): it stays uncertain until a person decides.
 * - `idempotent`: running the effect again is harmless, so recovery runs it again.
 * - `reconcile`: the tool inspects the world and says whether the effect happened. It
 *   receives the same context the effect did (operation id, idempotency key), so it can
 *   look the effect up by the key it was sent with.
 */
export type RecoveryPolicy =
  | { readonly kind: 'never_auto_retry' }
  | { readonly kind: 'idempotent' }
  | {
      readonly kind: 'reconcile';
      readonly reconcile: (
        operation: UncertainOperation,
        context: ToolCallContext,
      ) => Promise<ReconcileDecision>;
    };

/** Builders for recovery policies. */
export const RecoveryPolicy = {
  neverAutoRetry: (): RecoveryPolicy => ({ kind: 'never_auto_retry' }),
  idempotent: (): RecoveryPolicy => ({ kind: 'idempotent' }),
  reconcile: (
    reconcile: (operation: UncertainOperation, context: ToolCallContext) => Promise<ReconcileDecision>,
  ): RecoveryPolicy => ({ kind: 'reconcile', reconcile }),
} as const;
