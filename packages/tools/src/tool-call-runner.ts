import {
  type FactError,
  type Language,
  rejectionSentence,
  type ToolCall,
  type ToolCallContext,
  type ToolCallIdentity,
  ToolError,
  type ToolErrorCode,
  type ToolRejection,
  ToolResult,
} from '@factum/agent-facts';
import { openCallContext } from './call-context.js';
import type { CommitLedger } from './commit-ledger.js';
import type { CatalogEntry } from './tool-catalog.js';
import type { ToolLock } from './tool-lock.js';

/** What every call of one run shares. */
export type RunContext = {
  readonly ledger: CommitLedger;
  readonly lock: ToolLock;
  readonly language: Language;
};

/** One call about to go through the protocol. */
export type PreparedCall = {
  readonly operationId: string;
  readonly identity: ToolCallIdentity;
  readonly call: ToolCall;
  readonly entry: CatalogEntry | undefined;
  readonly invalidArguments?: string;
};

const rejectionCodes: Record<ToolRejection['kind'], ToolErrorCode> = {
  cancelled: 'cancelled',
  invalid_input: 'invalid_input',
  unavailable: 'unavailable',
  not_nestable: 'not_nestable',
  interrupted: 'cancelled',
  limit_exceeded: 'limit_exceeded',
  repeated_call_id: 'invalid_input',
  denied: 'cancelled',
  expired: 'cancelled',
  approval_required: 'not_nestable',
};

/** Records that a call did not run, and throws the matching `ToolError`. */
export async function reject(
  context: RunContext,
  prepared: PreparedCall,
  reason: ToolRejection,
): Promise<never> {
  await context.ledger.commit({
    kind: 'tool_rejected',
    operationId: prepared.operationId,
    call: prepared.identity,
    name: prepared.call.name,
    input: prepared.call.input,
    reason,
  });
  throw new ToolError(
    rejectionCodes[reason.kind],
    `${prepared.call.name} ${rejectionSentence(reason, context.language)}`,
  );
}

/** Why a call may not run at all, checked before anything is written but the rejection. */
export function refusal(prepared: PreparedCall, signal: AbortSignal): ToolRejection | undefined {
  if (prepared.entry === undefined) return { kind: 'unavailable' };
  if (prepared.invalidArguments !== undefined) {
    return { kind: 'invalid_input', message: 'the arguments are not valid JSON' };
  }
  const check = prepared.entry.checkInput(prepared.call.input);
  if (!check.ok) return { kind: 'invalid_input', message: check.message };
  if (signal.aborted) return { kind: 'cancelled' };
  return undefined;
}

/**
 * The at-most-once protocol for one call whose tool is in the catalog: T1 durable,
 * then the effect, then T2 (a read-only tool's T1 rides with its T2). A commit failure
 * at either boundary throws `ToolError('persistence')`; an effect that throws settles as
 * failed, except one that throws `ToolError('outcome_unknown')`, which is rethrown with
 * nothing settled.
 */
export async function runCall(
  context: RunContext,
  prepared: PreparedCall,
  signal: AbortSignal,
  { approved = false }: { readonly approved?: boolean } = {},
): Promise<ToolResult> {
  const entry = prepared.entry!;
  const release = await context.lock.acquire(entry.registration.semantics);
  try {
    if (signal.aborted) return await reject(context, prepared, { kind: 'cancelled' });
    await dispatch(context, prepared, approved);
    const call = openCallContext(context.ledger, { operationId: prepared.operationId, signal, attempt: 1 });
    let settled: Settled;
    try {
      settled = await effect(entry, prepared.call, call.context);
    } finally {
      call.close();
    }
    // A progress note that was not recorded leaves the call uncertain, never settled.
    const lost = call.failure();
    if (lost !== undefined) throw lost;
    if (settled.kind === 'failed') {
      await context.ledger.commit({
        kind: 'tool_settled',
        operationId: prepared.operationId,
        outcome: settled,
      });
      throw new ToolError(
        settled.error.code === 'invalid_output' ? 'invalid_output' : 'failed',
        `${prepared.call.name} failed: ${settled.error.message}`,
      );
    }
    await context.ledger.commit(
      {
        kind: 'tool_settled',
        operationId: prepared.operationId,
        outcome: { kind: 'succeeded', result: settled.result.reference() },
      },
      settled.result,
    );
    return settled.result;
  } finally {
    release();
  }
}

/**
 * T1. A read-only tool's (`ToolRegistration.readOnly`) rides with its T2: with no effect
 * to guard, nothing is waited for before it runs, and no lease needs to hold for it to
 * start (the T2 that carries the T1 is fenced like any write). An approved call's T1 is
 * waited for whatever its tool: the log checks the approval in that T1's transaction.
 */
async function dispatch(context: RunContext, prepared: PreparedCall, approved: boolean): Promise<void> {
  const { source, readOnly } = prepared.entry!.registration;
  const fact = {
    kind: 'tool_dispatched',
    operationId: prepared.operationId,
    call: prepared.call,
    ...(source === undefined ? {} : { source }),
  } as const;
  if (readOnly === true && !approved) {
    await context.ledger.defer(fact);
    return;
  }
  const committed = await context.ledger.commit(fact);
  // The T1's answer may have come late (a network that held it): no effect past the lease.
  context.ledger.checkEffectStart(committed, prepared.operationId);
}

/** How an effect ended, before it is recorded. */
export type Settled = { kind: 'succeeded'; result: ToolResult } | { kind: 'failed'; error: FactError };

/** Runs an effect and turns what it returned or threw into a settlement (its output checked). */
export async function effect(
  entry: CatalogEntry,
  call: ToolCall,
  context: ToolCallContext,
): Promise<Settled> {
  let value: unknown;
  try {
    value = await entry.registration.handler.executor.invoke(call.name, call.input, context);
  } catch (error) {
    // An effect that cannot tell whether it happened is not settled: it stays uncertain.
    if (ToolError.isInstance(error) && error.code === 'outcome_unknown') throw error;
    return { kind: 'failed', error: { code: codeOf(error), message: messageOf(error) } };
  }
  let result: ToolResult;
  try {
    result = ToolResult.of(value ?? null);
  } catch {
    return {
      kind: 'failed',
      error: { code: 'invalid_output', message: 'the tool returned a value with no JSON form' },
    };
  }
  const check = entry.checkOutput?.(result.json());
  if (check !== undefined && !check.ok) {
    return {
      kind: 'failed',
      error: {
        code: 'invalid_output',
        message: `the result does not match the output schema: ${check.message}`,
      },
    };
  }
  return { kind: 'succeeded', result };
}

function codeOf(error: unknown): string {
  if (ToolError.isInstance(error)) return error.code;
  return 'failed';
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : 'the tool failed';
}
