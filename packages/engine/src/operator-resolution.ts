import { type EventOrigin, EventWrite, type Fact, RuntimeEvent, ToolResult } from '@factum/agent-facts';
import type { EventLog } from '@factum/event-log';
import { refusalOf } from './approval-decision.js';
import { findOperation, type OperationRecord } from './operation-lookup.js';
import { RunError } from './run-error.js';
import type { SessionAccess } from './session-access.js';

/** What a person says became of an uncertain operation. */
export type ResolveOptions = {
  readonly outcome: 'succeeded' | 'failed' | 'not_run';
  /** What the effect returned, as the model should read it (only with `succeeded`). */
  readonly result?: string;
  /** Who resolved it (1 to 256 characters). */
  readonly by: string;
  /** Why: required, at most 2048 characters; the model reads it for `failed` and `not_run`. */
  readonly note: string;
  /** The operation's session: needed only when another session uses the same operation id. */
  readonly sessionId?: string;
};

/** The recorded resolution. */
export type OperationResolution = {
  readonly operationId: string;
  readonly sessionId: string;
  readonly outcome: ResolveOptions['outcome'];
  readonly by: string;
  readonly note: string;
};

/**
 * Records a person's resolution of an uncertain operation (dispatched, never settled
 * or reconciled) as `tool_reconciled {policy: 'operator'}` in the invocation that
 * dispatched it. It unblocks the session like a reconciler's decision, and the model's
 * next request carries it. The dispatching run must have ended (recovery ends a dead
 * host's run); a live one is refused `busy`.
 */
export async function resolveOperation(
  log: EventLog,
  operationId: string,
  options: ResolveOptions,
  context: {
    readonly access: SessionAccess;
    readonly origin?: EventOrigin;
    readonly recover: () => Promise<unknown>;
  },
): Promise<OperationResolution> {
  checkOptions(options);
  let found = await uncertain(log, context.access, operationId, options.sessionId);
  if (!ended(found)) {
    await context.recover();
    found = await uncertain(log, context.access, operationId, options.sessionId);
    if (!ended(found)) {
      throw new RunError(
        'busy',
        `the run that dispatched ${operationId} is still live; its effect may yet settle`,
      );
    }
  }
  const dispatch = found.facts.find(({ fact }) => fact.kind === 'tool_dispatched')!;
  const decision =
    options.outcome === 'succeeded'
      ? undefined
      : options.outcome === 'failed'
        ? ({
            kind: 'failed',
            error: { code: 'failed', message: `a person recorded that it failed: ${options.note}` },
          } as const)
        : ({ kind: 'not_run' } as const);
  const result = options.outcome === 'succeeded' ? ToolResult.of(options.result ?? null) : undefined;
  const fact: Fact = {
    kind: 'tool_reconciled',
    operationId,
    policy: 'operator',
    decision: result === undefined ? decision! : { kind: 'succeeded', result: result.reference() },
    by: options.by,
    note: options.note,
  };
  const event = RuntimeEvent.create(dispatch.invocation, fact, context.origin);
  try {
    await context.access.commit(
      result === undefined ? EventWrite.plain(event) : EventWrite.withResult(event, result),
    );
  } catch (error) {
    throw refusalOf(error, operationId);
  }
  return {
    operationId,
    sessionId: found.sessionId,
    outcome: options.outcome,
    by: options.by,
    note: options.note,
  };
}

async function uncertain(
  log: EventLog,
  access: SessionAccess,
  operationId: string,
  sessionId: string | undefined,
): Promise<OperationRecord> {
  const found = await findOperation(log, access, operationId, sessionId);
  const facts = found?.facts.map(({ fact }) => fact) ?? [];
  const dispatched = facts.some((fact) => fact.kind === 'tool_dispatched');
  const closed = facts.some(
    (fact) =>
      fact.kind === 'tool_settled' ||
      fact.kind === 'tool_rejected' ||
      (fact.kind === 'tool_reconciled' && fact.decision.kind !== 'unknown'),
  );
  if (found === undefined || !dispatched || closed) {
    throw new RunError(
      'not_uncertain',
      found === undefined
        ? `no operation ${operationId} is in the log`
        : `operation ${operationId} is not uncertain: ${dispatched ? 'its outcome is recorded' : 'it was never dispatched'}`,
    );
  }
  return found;
}

function ended(found: OperationRecord): boolean {
  const dispatchedIn = found.facts.find(({ fact }) => fact.kind === 'tool_dispatched')!.invocation
    .invocationId;
  return found.events.some(
    ({ event }) => event.invocation.invocationId === dispatchedIn && event.fact.kind === 'invocation_ended',
  );
}

function checkOptions(options: ResolveOptions): void {
  if (!['succeeded', 'failed', 'not_run'].includes(options.outcome)) {
    throw new RunError('invalid_input', "an outcome is 'succeeded', 'failed' or 'not_run'");
  }
  if (
    options.result !== undefined &&
    (options.outcome !== 'succeeded' || typeof options.result !== 'string')
  ) {
    throw new RunError('invalid_input', 'only a succeeded outcome carries a result, as text');
  }
  if (typeof options.by !== 'string' || options.by.length < 1 || options.by.length > 256) {
    throw new RunError('invalid_input', '`by` names who resolved, in 1 to 256 characters');
  }
  if (typeof options.note !== 'string' || options.note.trim() === '' || options.note.length > 2048) {
    throw new RunError('invalid_input', 'a resolution needs a note of 1 to 2048 characters saying why');
  }
}
