import type { Fact, Invocation, InvocationOutcome } from '@factum/agent-facts';
import {
  type ApprovalState,
  checkApprovedDispatch,
  checkDecision,
  checkPendingEnd,
  checkRequest,
  decidingParked,
} from './approval-rules.js';
import { checkOwner, type FencedWrite } from './fencing-rule.js';
import { checkFork, type ForkSourceState, forkSourceKey } from './fork-rule.js';
import type { InvocationOwner, LeaseView } from './invocation-owner.js';
import { RuleRefusal } from './rule-refusal.js';
import { checkSubmission } from './submission-rule.js';
import { checkWriterLease } from './writer-lease-rule.js';

/** What the rules need to know about an invocation. */
export type InvocationState = {
  readonly turnId: string;
  readonly runId: string;
  ended: boolean;
  terminal: string | null;
  /** Who may write to it (null: opened without a lease, anyone may). */
  owner: InvocationOwner | null;
};

/** What the rules need to know about an operation id in a session. */
export type OperationState = {
  readonly invocationId: string;
  readonly parentOperationId: string | null;
  /** `requested`: it asked for a person's approval and was neither dispatched nor rejected since. */
  state: 'requested' | 'dispatched' | 'closed' | 'rejected';
  /** Present when the operation asked for approval (even once dispatched or rejected). */
  approval?: ApprovalState;
  /**
   * The last recorded attempt (1: the dispatch; n: the last `tool_redispatched`).
   * Loaded only for batches that need it; `undefined` means not loaded.
   */
  attempt?: number;
};

/** What the rules need to know about a session. */
export type SessionState = {
  liveInvocationId: string | null;
  heldForInvocationId: string | null;
};

/** The slice of log state a batch touches, read inside the batch's transaction. */
export interface RuleState {
  invocation(sessionId: string, invocationId: string): InvocationState | undefined;
  operation(sessionId: string, operationId: string): OperationState | undefined;
  session(sessionId: string): SessionState;
  /** The invocation opened with `key` in the session, if any (see `checkSubmission`). */
  submission(sessionId: string, key: string): string | undefined;
  /** Whether the session holds any fact (a fork must be a session's first). */
  sessionHasFacts(sessionId: string): boolean;
  /** What the source session holds at a fork's boundary (see `forkSourceKey`). */
  forkSource(key: string): ForkSourceState | undefined;
}

/** The state changes one accepted write makes, applied after its event row. */
export type RuleEffects = {
  readonly openInvocation?: Invocation;
  /** The submitter's key the opening takes in its session. */
  readonly submission?: string;
  /** The owner of an opened invocation, or the new owner a takeover gives it. */
  readonly owner?: InvocationOwner;
  readonly takeOver?: boolean;
  readonly endInvocation?: { readonly terminal: string; readonly heldFor: string | null };
  readonly dispatch?: { readonly operationId: string; readonly parentOperationId: string | null };
  readonly reject?: { readonly operationId: string };
  readonly close?: { readonly operationId: string };
  readonly redispatch?: { readonly operationId: string; readonly attempt: number };
  /** An operation asks for approval: its row is made in state `requested`. */
  readonly request?: { readonly operationId: string; readonly approval: ApprovalState };
  readonly decide?: { readonly operationId: string; readonly decision: 'approved' | 'denied' | 'expired' };
  /** A requested operation is dispatched (approved) or rejected: its row moves on. */
  readonly resume?: {
    readonly operationId: string;
    readonly state: 'dispatched' | 'rejected';
    readonly parentOperationId: string | null;
  };
};

/**
 * Facts the rules judge by their kind and invocation alone (see `checkFact`): a batch
 * crossing to the writer thread sends no payload of theirs for the rules to parse.
 */
export const JUDGED_BY_KIND: ReadonlySet<string> = new Set([
  'model_requested',
  'model_observed',
  'model_completed',
]);

/** Whether an accepted write changes nothing beside its own event row (a model fact). */
export function changesNothing(effects: RuleEffects): boolean {
  for (const key in effects) if (effects[key as keyof RuleEffects] !== undefined) return false;
  return true;
}

/**
 * Checks one write against the log's rules and the state as it stands (including the
 * writes before it in the same batch), and says what it changes. Throws
 * `RuleRefusal`; never half-applies: the caller mutates state only on success.
 */
export function checkWrite(
  write: FencedWrite,
  state: RuleState,
  leases?: LeaseView,
  now: number | undefined = leases?.now,
): RuleEffects {
  const { invocation, fact } = write.event;
  const { sessionId, invocationId } = invocation;
  checkWriterLease(write, leases);
  const known = state.invocation(sessionId, invocationId);
  if (fact.kind === 'invocation_opened') {
    // A repeated submission is answered before `session_busy`: its first run may be live.
    const submission = checkSubmission(invocation, fact.idempotencyKey, state);
    const opened = { ...checkOpen(invocation, known, state.session(sessionId)), ...submission };
    return write.writer === undefined ? opened : { ...opened, owner: write.writer };
  }
  if (fact.kind === 'session_forked') {
    // A fork's fact opens no invocation: nothing else is ever appended under its id.
    const empty = !state.sessionHasFacts(sessionId) && known === undefined;
    checkFork(fact, invocation, { empty }, state.forkSource(forkSourceKey(fact)));
    return {};
  }
  if (known === undefined) {
    throw new RuleRefusal(
      'unknown_invocation',
      `invocation ${invocationId} of session ${sessionId} was never opened: append invocation_opened first`,
    );
  }
  if (known.turnId !== invocation.turnId || known.runId !== invocation.runId) {
    throw new RuleRefusal(
      'invalid_write',
      `invocation ${invocationId} belongs to turn ${known.turnId} / run ${known.runId}, not ${invocation.turnId} / ${invocation.runId}`,
    );
  }
  // Before the seal: a stale owner learns it was fenced, not merely that the run ended.
  const moved = checkOwner(write, known.owner, leases);
  // Reconciliation is evidence about the past, recorded after the invocation ended: its
  // decision, a recorded re-run of an uncertain effect, and that re-run's progress.
  // So is a person's decision on an approval the invocation parked for.
  if (known.ended && !reconciling(fact, invocation, state) && !decidingParked(fact, known.terminal)) {
    throw new RuleRefusal(
      'sealed_invocation',
      `invocation ${invocationId} has ended (${known.terminal}); nothing more is appended to it`,
    );
  }
  const effects = checkFact(fact, invocation, state, now);
  return moved === undefined ? effects : { ...effects, owner: moved.newOwner, takeOver: true };
}

function checkOpen(
  invocation: Invocation,
  known: InvocationState | undefined,
  session: SessionState,
): RuleEffects {
  if (known !== undefined) {
    throw new RuleRefusal(
      'duplicate_invocation',
      `invocation ${invocation.invocationId} was already opened in session ${invocation.sessionId}`,
    );
  }
  if (session.liveInvocationId !== null) {
    throw new RuleRefusal(
      'session_busy',
      `session ${invocation.sessionId} already has a live invocation (${session.liveInvocationId}); one invocation per session runs at a time`,
    );
  }
  if (session.heldForInvocationId !== null && session.heldForInvocationId !== invocation.invocationId) {
    throw new RuleRefusal(
      'session_held',
      `session ${invocation.sessionId} is paused for a handoff to invocation ${session.heldForInvocationId}; only that successor may continue it`,
    );
  }
  return { openInvocation: invocation };
}

function checkFact(
  fact: Fact,
  invocation: Invocation,
  state: RuleState,
  now: number | undefined,
): RuleEffects {
  const { sessionId, invocationId } = invocation;
  switch (fact.kind) {
    case 'invocation_opened':
    case 'session_forked':
      throw new Error('unreachable: handled before checkFact');
    // These read nothing of the fact but its kind: keep `JUDGED_BY_KIND` in step.
    case 'model_requested':
    case 'model_observed':
    case 'model_completed':
      return {};
    case 'tool_dispatched': {
      const known = state.operation(sessionId, fact.operationId);
      const approved =
        known?.approval !== undefined && known.state === 'requested'
          ? checkApprovedDispatch(fact, { ...known, approval: known.approval })
          : undefined;
      if (known !== undefined && approved === undefined) {
        throw new RuleRefusal(
          'duplicate_dispatch',
          `operation ${fact.operationId} was already dispatched or rejected in session ${sessionId}; an accepted call never runs twice`,
        );
      }
      const origin = fact.call.origin;
      const parent = origin.kind === 'provider' ? null : origin.parentOperationId;
      if (parent !== null && state.operation(sessionId, parent)?.state !== 'dispatched') {
        throw new RuleRefusal(
          'parent_not_open',
          `operation ${fact.operationId} names parent ${parent}, which is not a dispatched, unsettled operation`,
        );
      }
      if (approved !== undefined) return { resume: { ...approved, parentOperationId: parent } };
      return { dispatch: { operationId: fact.operationId, parentOperationId: parent } };
    }
    case 'tool_rejected': {
      // A call that waited for approval is rejected once denied, expired or cancelled.
      const known = state.operation(sessionId, fact.operationId);
      if (known?.state === 'requested') {
        return { resume: { operationId: fact.operationId, state: 'rejected', parentOperationId: null } };
      }
      if (known !== undefined) {
        throw new RuleRefusal(
          'duplicate_dispatch',
          `operation ${fact.operationId} was already dispatched or rejected in session ${sessionId}`,
        );
      }
      return { reject: { operationId: fact.operationId } };
    }
    case 'tool_notified':
      openOperation(state, invocation, fact.operationId, fact.kind);
      return {};
    case 'tool_settled':
      openOperation(state, invocation, fact.operationId, fact.kind);
      return { close: { operationId: fact.operationId } };
    case 'tool_redispatched': {
      const operation = openOperation(state, invocation, fact.operationId, fact.kind);
      const last = operation.attempt ?? 1;
      if (fact.attempt !== last + 1) {
        throw new RuleRefusal(
          'duplicate_attempt',
          `operation ${fact.operationId} is at attempt ${last}: attempt ${fact.attempt} ${fact.attempt <= last ? 'was already recorded' : 'skips one'}; each attempt runs at most once`,
        );
      }
      return { redispatch: { operationId: fact.operationId, attempt: fact.attempt } };
    }
    case 'tool_reconciled':
      if (fact.policy === 'operator') checkOperator(fact);
      openOperation(state, invocation, fact.operationId, fact.kind);
      return fact.decision.kind === 'unknown' ? {} : { close: { operationId: fact.operationId } };
    case 'approval_requested':
      return checkRequest(fact, invocation, state);
    case 'approval_decided':
      return checkDecision(fact, invocation, state, now);
    case 'invocation_ended': {
      const outcome = fact.outcome;
      if (outcome.kind === 'approval_pending') checkPendingEnd(outcome.operations, invocation, state);
      const terminal = terminalOf(outcome);
      const heldFor = outcome.kind === 'handoff_paused' ? outcome.pause.intent.successorInvocationId : null;
      if (heldFor !== null && heldFor === invocationId) {
        throw new RuleRefusal(
          'invalid_write',
          'a handoff cannot name the paused invocation as its successor',
        );
      }
      return { endInvocation: { terminal, heldFor } };
    }
    default:
      return fact satisfies never;
  }
}

/** The terminal status stored for an outcome (as `terminalStatusOf` says, without loading a schema). */
function terminalOf(outcome: InvocationOutcome): string {
  if (outcome.kind === 'handoff_paused') return 'paused';
  return outcome.kind === 'approval_pending' ? 'awaiting_approval' : outcome.kind;
}

/**
 * An operator's resolution says who and why, and what happened: succeeded, failed, or
 * not run. `unknown` is what a reconciler says when it cannot tell; a person resolving
 * an operation by hand settles it.
 */
function checkOperator(fact: Extract<Fact, { kind: 'tool_reconciled' }>): void {
  if (fact.by === undefined || fact.note === undefined || fact.note.trim() === '') {
    throw new RuleRefusal(
      'invalid_write',
      `an operator's resolution of operation ${fact.operationId} names who resolved it (by) and why (note)`,
    );
  }
  if (fact.decision.kind === 'unknown' || fact.attempt !== undefined) {
    throw new RuleRefusal(
      'invalid_write',
      `an operator resolves operation ${fact.operationId} as succeeded, failed or not_run, with no attempt`,
    );
  }
}

/**
 * Whether a write to an ended invocation belongs to the reconciliation of one of its
 * operations: a decision, a recorded re-run, or progress of an operation still open
 * (a re-run's, or a reconciler's inspecting the world).
 */
function reconciling(fact: Fact, invocation: Invocation, state: RuleState): boolean {
  if (fact.kind === 'tool_reconciled' || fact.kind === 'tool_redispatched') return true;
  if (fact.kind !== 'tool_notified') return false;
  return state.operation(invocation.sessionId, fact.operationId)?.state === 'dispatched';
}

function openOperation(
  state: RuleState,
  invocation: Invocation,
  operationId: string,
  kind: string,
): OperationState {
  const operation = state.operation(invocation.sessionId, operationId);
  if (operation === undefined || operation.state === 'rejected' || operation.state === 'requested') {
    throw new RuleRefusal(
      'unknown_operation',
      `${kind} for operation ${operationId}, which was never dispatched: a settlement needs its dispatch`,
    );
  }
  if (operation.invocationId !== invocation.invocationId) {
    throw new RuleRefusal(
      'invalid_write',
      `operation ${operationId} belongs to invocation ${operation.invocationId}, not ${invocation.invocationId}`,
    );
  }
  if (operation.state === 'closed') {
    throw new RuleRefusal('operation_closed', `operation ${operationId} has already settled`);
  }
  return operation;
}
