import {
  CommitError,
  type EventOrigin,
  type EventSink,
  type Invocation,
  type ReconciliationDecision,
  type RuntimeEvent,
  ToolError,
  ToolResult,
} from '@factum/agent-facts';
import { openCallContext } from './call-context.js';
import { CommitLedger } from './commit-ledger.js';
import { type ClosedBy, closerOf, describeCloser } from './operation-closer.js';
import type { ReconcileDecision, UncertainOperation } from './recovery-policy.js';
import { effect } from './tool-call-runner.js';
import type { CatalogEntry, ToolCatalog } from './tool-catalog.js';

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
  /**
   * `lost_race`: another reconciler recorded this operation's decision (or this
   * attempt) first; nothing was run or recorded here, and `closedBy` says what it wrote.
   */
  readonly decision: 'succeeded' | 'failed' | 'unknown' | 'not_run' | 'left_uncertain' | 'lost_race';
  readonly reason: string;
  /** The attempt this reconciliation ran or found (1: only the dispatch ran). */
  readonly attempt: number;
  readonly closedBy?: ClosedBy;
};

/** Options of `reconcileUncertain`. */
export type ReconcileOptions = {
  readonly catalog: ToolCatalog;
  readonly signal?: AbortSignal;
  readonly origin?: EventOrigin;
  /**
   * How many attempts an idempotent effect may have in all, the dispatch included
   * (default 3: the dispatch and two recorded re-runs). Past it the operation stays
   * uncertain for a person to decide.
   */
  readonly maxAttempts?: number;
};

/** The default bound on attempts of an idempotent effect, the dispatch included. */
export const DEFAULT_MAX_ATTEMPTS = 3;

const bounds = { maxEvents: 100_000, maxBytes: 256 * 1024 * 1024 };

// Refusals that mean another reconciler got there first; anything else is a failure.
const raceCodes = new Set(['operation_closed', 'duplicate_attempt']);

/**
 * Applies each uncertain operation's recovery policy and records every decision as a
 * `tool_reconciled` fact, so an operation is closed with evidence instead of parked
 * forever. An idempotent effect is re-run only after its `tool_redispatched {attempt}`
 * is durable (at most once per attempt, bounded by `maxAttempts`), and its outcome is
 * recorded like a settlement: a crash during the re-run leaves it uncertain at that
 * attempt. `never_auto_retry` operations — and Code mode parents and cells, which are
 * never re-run — are left uncertain and reported, untouched. When another reconciler
 * closes an operation (or takes its attempt) first, this one reports who, and goes on
 * with the others.
 */
export async function reconcileUncertain(
  source: RecoverySource & EventSink,
  invocation: Invocation,
  options: ReconcileOptions,
): Promise<ReconcileOutcome[]> {
  const events = await source.invocationEvents(invocation, bounds);
  const ledger = new CommitLedger(source, invocation, options.origin);
  const work = {
    source,
    invocation,
    ledger,
    signal: options.signal ?? new AbortController().signal,
    maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
  };
  const outcomes: ReconcileOutcome[] = [];
  for (const operation of uncertainOf(events)) {
    const entry =
      operation.origin === 'provider' || operation.origin === 'code_mode'
        ? options.catalog.get(operation.name)
        : undefined;
    outcomes.push(await reconcileOne(work, operation, entry));
  }
  return outcomes;
}

type Work = {
  readonly source: RecoverySource;
  readonly invocation: Invocation;
  readonly ledger: CommitLedger;
  readonly signal: AbortSignal;
  readonly maxAttempts: number;
};

type Uncertain = UncertainOperation & { readonly origin: string; readonly attempt: number };

async function reconcileOne(
  work: Work,
  operation: Uncertain,
  entry: CatalogEntry | undefined,
): Promise<ReconcileOutcome> {
  const { operationId, name } = operation;
  const policy = entry?.recovery ?? { kind: 'never_auto_retry' as const };
  const report = (decision: ReconcileOutcome['decision'], reason: string, attempt = operation.attempt) => ({
    operationId,
    name,
    decision,
    reason,
    attempt,
  });
  if (policy.kind === 'never_auto_retry') {
    return report(
      'left_uncertain',
      entry ? 'the tool never retries automatically' : 'cells and unknown tools are never re-run',
    );
  }
  const attempt = policy.kind === 'idempotent' ? operation.attempt + 1 : operation.attempt;
  if (policy.kind === 'idempotent') {
    if (attempt > work.maxAttempts) {
      return report(
        'left_uncertain',
        `attempts exhausted: ${operation.attempt} of at most ${work.maxAttempts} ran with no recorded outcome`,
      );
    }
    const reason = `idempotent: re-run by reconciliation (attempt ${attempt} of at most ${work.maxAttempts}); the outcome of attempt ${operation.attempt} was never recorded`;
    const taken = await raced(work, operation, () =>
      work.ledger.commit({ kind: 'tool_redispatched', operationId, attempt, reason }),
    );
    if (taken !== undefined) return taken;
    if (!work.ledger.mayStartEffect()) {
      return report('left_uncertain', 'the lease lapsed before the re-run could start', attempt);
    }
  }
  const call = openCallContext(work.ledger, { operationId, signal: work.signal, attempt });
  let found: ReconcileDecision | { kind: 'settled'; decision: ReconciliationDecision; result?: ToolResult };
  try {
    found =
      policy.kind === 'idempotent'
        ? settledOf(await effect(entry!, callOf(operation), call.context))
        : await policy.reconcile(operation, call.context);
  } catch (error) {
    // The re-run cannot tell whether it happened (its server died, say): it stays
    // uncertain at this attempt, like a dispatch would.
    if (!ToolError.isInstance(error) || error.code !== 'outcome_unknown') throw error;
    return report('left_uncertain', `the outcome of the re-run is unknown: ${error.message}`, attempt);
  } finally {
    call.close();
  }
  if (call.failure() !== undefined) {
    return report('left_uncertain', 'a progress note of the re-run could not be recorded', attempt);
  }
  const { decision, result } = found.kind === 'settled' ? found : toFact(found);
  const taken = await raced(work, operation, () =>
    work.ledger.commit(
      {
        kind: 'tool_reconciled',
        operationId,
        policy: policy.kind,
        decision,
        ...(policy.kind === 'idempotent' ? { attempt } : {}),
      },
      result,
    ),
  );
  return taken ?? report(decision.kind, policy.kind, attempt);
}

/**
 * Runs a commit that another reconciler may have beaten; a refusal that says so becomes
 * a `lost_race` outcome naming what the other one wrote. Other failures are thrown.
 */
async function raced(
  work: Work,
  operation: Uncertain,
  commit: () => Promise<unknown>,
): Promise<ReconcileOutcome | undefined> {
  try {
    await commit();
    return undefined;
  } catch (error) {
    const cause = ToolError.isInstance(error) ? error.cause : error;
    if (!CommitError.isInstance(cause) || cause.outcome !== 'rejected' || !raceCodes.has(cause.code))
      throw error;
    const events = await work.source.invocationEvents(work.invocation, bounds);
    const closedBy = closerOf(events, operation.operationId, operation.attempt);
    return {
      operationId: operation.operationId,
      name: operation.name,
      decision: 'lost_race',
      reason: closedBy ? `another reconciler got there first: ${describeCloser(closedBy)}` : cause.message,
      attempt: closedBy?.attempt ?? operation.attempt,
      ...(closedBy === undefined ? {} : { closedBy }),
    };
  }
}

function callOf(operation: Uncertain) {
  return {
    id: operation.operationId,
    name: operation.name,
    input: operation.input as never,
    origin: { kind: 'provider' as const, stepId: 'reconciliation' },
  };
}

function settledOf(settled: Awaited<ReturnType<typeof effect>>): {
  kind: 'settled';
  decision: ReconciliationDecision;
  result?: ToolResult;
} {
  if (settled.kind === 'failed') return { kind: 'settled', decision: settled };
  return {
    kind: 'settled',
    decision: { kind: 'succeeded', result: settled.result.reference() },
    result: settled.result,
  };
}

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
        attempt: 1,
      });
    } else if (fact.kind === 'tool_redispatched') {
      const known = open.get(fact.operationId);
      if (known !== undefined) open.set(fact.operationId, { ...known, attempt: fact.attempt });
    } else if (
      fact.kind === 'tool_settled' ||
      (fact.kind === 'tool_reconciled' && fact.decision.kind !== 'unknown')
    ) {
      open.delete(fact.operationId);
    }
  }
  return [...open.values()];
}

function toFact(found: ReconcileDecision): { decision: ReconciliationDecision; result?: ToolResult } {
  if (found.kind !== 'succeeded') return { decision: found };
  const result = ToolResult.of(found.value ?? null);
  return { decision: { kind: 'succeeded', result: result.reference() }, result };
}
