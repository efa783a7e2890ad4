import {
  type EventOrigin,
  type EventSink,
  type Invocation,
  type ReconciliationDecision,
  type RuntimeEvent,
  type ToolCallContext,
  type ToolExecutor,
  ToolResult,
} from '@factum/agent-facts';
import { openCallContext } from './call-context.js';
import { CommitLedger } from './commit-ledger.js';
import type { ReconcileDecision, UncertainOperation } from './recovery-policy.js';
import type { ToolCatalog } from './tool-catalog.js';

/** Where reconciliation reads an invocation's history (an `EventLog` is one). */
export interface RecoverySource {
  invocationEvents(
    invocation: Invocation,
    bounds: { maxEvents: number; maxBytes: number },
  ): Promise<readonly { readonly sequence: number; readonly event: RuntimeEvent }[]>;
}

/** What reconciliation did with one uncertain operation. */
export type ReconcileOutcome = {
  readonly operationId: string;
  readonly name: string;
  readonly decision: 'succeeded' | 'failed' | 'unknown' | 'left_uncertain';
  readonly reason: string;
};

const bounds = { maxEvents: 100_000, maxBytes: 256 * 1024 * 1024 };

/**
 * Applies each uncertain operation's recovery policy and records every decision as a
 * `tool_reconciled` fact, so an operation is closed with evidence instead of parked
 * forever. `never_auto_retry` operations — and Code mode parents and cells, which are
 * never re-run — are left uncertain and reported, untouched.
 */
export async function reconcileUncertain(
  source: RecoverySource & EventSink,
  invocation: Invocation,
  options: { catalog: ToolCatalog; signal?: AbortSignal; origin?: EventOrigin },
): Promise<ReconcileOutcome[]> {
  const events = await source.invocationEvents(invocation, bounds);
  const ledger = new CommitLedger(source, invocation, options.origin);
  const signal = options.signal ?? new AbortController().signal;
  const outcomes: ReconcileOutcome[] = [];
  for (const operation of uncertainOf(events)) {
    const entry =
      operation.origin === 'provider' || operation.origin === 'code_mode'
        ? options.catalog.get(operation.name)
        : undefined;
    const policy = entry?.recovery ?? { kind: 'never_auto_retry' as const };
    if (policy.kind === 'never_auto_retry') {
      const reason = entry
        ? 'the tool never retries automatically'
        : 'cells and unknown tools are never re-run';
      outcomes.push({
        operationId: operation.operationId,
        name: operation.name,
        decision: 'left_uncertain',
        reason,
      });
      continue;
    }
    const call = openCallContext(ledger, { operationId: operation.operationId, signal, attempt: 1 });
    const found =
      policy.kind === 'idempotent'
        ? await rerun(entry!.registration.handler.executor, operation, call.context)
        : await policy.reconcile(operation, call.context);
    call.close();
    const { decision, result } = toFact(found);
    await ledger.commit(
      { kind: 'tool_reconciled', operationId: operation.operationId, policy: policy.kind, decision },
      result,
    );
    outcomes.push({
      operationId: operation.operationId,
      name: operation.name,
      decision: decision.kind,
      reason: policy.kind,
    });
  }
  return outcomes;
}

type Uncertain = UncertainOperation & { readonly origin: string };

function uncertainOf(events: readonly { readonly event: RuntimeEvent }[]): Uncertain[] {
  const open = new Map<string, Uncertain>();
  for (const { event } of events) {
    const fact = event.fact;
    if (fact.kind === 'tool_dispatched') {
      open.set(fact.operationId, {
        operationId: fact.operationId,
        name: fact.call.name,
        input: fact.call.input,
        origin: fact.call.origin.kind,
      });
    } else if (
      fact.kind === 'tool_settled' ||
      (fact.kind === 'tool_reconciled' && fact.decision.kind !== 'unknown')
    ) {
      open.delete(fact.operationId);
    }
  }
  return [...open.values()];
}

async function rerun(
  executor: ToolExecutor,
  operation: UncertainOperation,
  context: ToolCallContext,
): Promise<ReconcileDecision> {
  try {
    return { kind: 'succeeded', value: await executor.invoke(operation.name, operation.input, context) };
  } catch (error) {
    return {
      kind: 'failed',
      error: { code: 'failed', message: error instanceof Error ? error.message : String(error) },
    };
  }
}

function toFact(found: ReconcileDecision): { decision: ReconciliationDecision; result?: ToolResult } {
  if (found.kind !== 'succeeded') return { decision: found };
  const result = ToolResult.of(found.value ?? null);
  return { decision: { kind: 'succeeded', result: result.reference() }, result };
}
