import type { CommitReceipt } from '@factum/agent-facts';
import { chainLink } from '@factum/agent-facts/digest';
import type { RuleEffects } from './append-rules.js';
import { applyApprovalEffects } from './approval-effects.js';
import type { AcceptedWrite } from './insert-events.js';
import { RuleCache } from './rule-cache.js';
import type { StagedWrite } from './staged-write.js';

/** What the caller of an accepted write is told once its row is durable. */
export function receiptOf(accepted: AcceptedWrite): CommitReceipt {
  const { sequence, event_id: eventId, digest, session_digest: sessionDigest } = accepted.row;
  return { sequence, eventId, digest, sessionDigest };
}

/**
 * Chains a write the rules accepted at the head of the log and of its session, and
 * applies what it changes to the cache: the row it becomes.
 */
export function acceptWrite(cache: RuleCache, staged: StagedWrite, effects: RuleEffects): AcceptedWrite {
  const { event } = staged;
  const session = cache.session(event.invocation.sessionId);
  const sequence = (cache.head?.sequence ?? 0) + 1;
  const digest = chainLink(cache.head?.digest, staged.digest);
  const sessionDigest = chainLink(session.head?.digest, staged.digest);
  cache.head = { sequence, digest };
  session.head = { sequence, digest: sessionDigest };
  applyEffects(cache, staged, effects);
  return {
    staged,
    effects,
    row: {
      sequence,
      event_id: event.id,
      session_id: event.invocation.sessionId,
      invocation_id: event.invocation.invocationId,
      run_id: event.invocation.runId,
      kind: event.fact.kind,
      operation_id: 'operationId' in event.fact ? event.fact.operationId : null,
      body: staged.body,
      bytes: staged.bytes,
      digest,
      session_digest: sessionDigest,
    },
  };
}

function applyEffects(cache: RuleCache, staged: StagedWrite, effects: RuleEffects): void {
  const { invocation } = staged.event;
  const session = cache.session(invocation.sessionId);
  if (effects.openInvocation) {
    cache.invocations.set(RuleCache.key(invocation.sessionId, invocation.invocationId), {
      turnId: invocation.turnId,
      runId: invocation.runId,
      ended: false,
      terminal: null,
      owner: effects.owner ?? null,
    });
    session.liveInvocationId = invocation.invocationId;
    session.heldForInvocationId = null;
  }
  if (effects.submission !== undefined) {
    cache.submissions.set(RuleCache.key(invocation.sessionId, effects.submission), invocation.invocationId);
  }
  if (effects.takeOver && effects.owner) {
    const known = cache.invocation(invocation.sessionId, invocation.invocationId);
    if (known) known.owner = effects.owner;
  }
  if (effects.endInvocation) {
    const known = cache.invocation(invocation.sessionId, invocation.invocationId);
    if (known) {
      known.ended = true;
      known.terminal = effects.endInvocation.terminal;
    }
    session.liveInvocationId = null;
    session.heldForInvocationId = effects.endInvocation.heldFor;
  }
  const operation = effects.dispatch ?? effects.reject;
  if (operation) {
    cache.operations.set(RuleCache.key(invocation.sessionId, operation.operationId), {
      invocationId: invocation.invocationId,
      parentOperationId: effects.dispatch?.parentOperationId ?? null,
      state: effects.dispatch ? 'dispatched' : 'rejected',
    });
  }
  if (effects.close) {
    const known = cache.operation(invocation.sessionId, effects.close.operationId);
    if (known) known.state = 'closed';
  }
  if (effects.redispatch) {
    const known = cache.operation(invocation.sessionId, effects.redispatch.operationId);
    if (known) known.attempt = effects.redispatch.attempt;
  }
  applyApprovalEffects(cache, invocation, effects);
}
