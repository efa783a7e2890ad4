import { describe, expect, it } from 'vitest';
import { type AbortResult, ConversationError, type ConversationEvent } from '../src/index.js';
import { eventually } from './support/deferred.js';
import { type PreparedCancelFault, PromptFaultStore, type Snapshot } from './support/prompt-fault-store.js';
import { OpenCodeStreamCase } from './support/stream-case.js';

/** The seed's 16 abort reconciliation cases. */
type AbortCase =
  | 'read_conflict'
  | 'read_rollback_failure'
  | 'persistent_read_conflict'
  | 'noop_rollback_failure'
  | 'begin_conflict'
  | 'delete_conflict'
  | 'commit_conflict'
  | 'lost_receipt'
  | 'unknown_receipt'
  | 'foreign_receipt'
  | 'lost_receipt_read_failure'
  | 'unknown_receipt_read_failure'
  | 'terminal_delete'
  | 'terminal_unknown_receipt'
  | 'dropped_commit_observer'
  | 'dropped_unknown_observer';

const isTerminal = (c: AbortCase) => c === 'terminal_delete' || c === 'terminal_unknown_receipt';
const isIdle = (c: AbortCase) =>
  ![
    'read_conflict',
    'read_rollback_failure',
    'persistent_read_conflict',
    'noop_rollback_failure',
    'begin_conflict',
  ].includes(c);
const isDropped = (c: AbortCase) => c === 'dropped_commit_observer' || c === 'dropped_unknown_observer';

const faultOf: Record<AbortCase, PreparedCancelFault> = {
  read_conflict: 'load_conflict_once',
  read_rollback_failure: 'load_conflict_once',
  persistent_read_conflict: 'load_conflict',
  noop_rollback_failure: 'none',
  terminal_delete: 'none',
  begin_conflict: 'begin_conflict_once',
  delete_conflict: 'delete_conflict_once',
  commit_conflict: 'commit_conflict_once',
  lost_receipt: 'commit_receipt_lost',
  unknown_receipt: 'commit_unavailable_once',
  terminal_unknown_receipt: 'commit_unavailable_once',
  foreign_receipt: 'commit_unavailable_foreign_receipt',
  lost_receipt_read_failure: 'commit_receipt_lost_read_unavailable_once',
  unknown_receipt_read_failure: 'commit_unavailable_read_unavailable_once',
  dropped_commit_observer: 'commit_receipt_held',
  dropped_unknown_observer: 'commit_unavailable_read_held',
};

/** Budget of the prompt observation when a case needs it to time out, and of an abort. */
const PROMPT_TIMEOUT_MS = 400;
const ABORT_DEADLINE_MS = 400;

type Settled = { ok: true; value: AbortResult } | { ok: false; error: ConversationError };

async function settle(work: Promise<AbortResult>): Promise<Settled> {
  try {
    return { ok: true, value: await work };
  } catch (error) {
    expect(ConversationError.isInstance(error), String(error)).toBe(true);
    return { ok: false, error: error as ConversationError };
  }
}

function errorOf(result: Settled, why: string): ConversationError {
  if (result.ok) throw new Error(`${why}; got ${JSON.stringify(result.value)}`);
  return result.error;
}

/** Fails if `work` settles before `gate` resolves; bounded by `ms`. */
async function before(gate: Promise<void>, work: Promise<unknown>, what: string, ms = 3000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      gate,
      work.then(
        (value) => Promise.reject(new Error(`${what}: returned first with ${JSON.stringify(value)}`)),
        (error: unknown) => Promise.reject(new Error(`${what}: failed first with ${String(error)}`)),
      ),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: not observed within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function verify(c: AbortCase): Promise<void> {
  const needsPromptTimeout = isTerminal(c) || (!isIdle(c) && c !== 'noop_rollback_failure');
  const t = await OpenCodeStreamCase.start({
    timeouts: {
      ...(needsPromptTimeout ? { promptMs: PROMPT_TIMEOUT_MS } : {}),
      ...(c === 'persistent_read_conflict' ? { abortMs: ABORT_DEADLINE_MS } : {}),
    },
  });
  const firstObserver = new AbortController();
  const pending: Promise<unknown>[] = [];
  try {
    // ---- setup: leave durable recovery work behind, each case in its own way ----
    let events: AsyncIterator<ConversationEvent> | undefined;
    if (c === 'noop_rollback_failure') {
      const caller = new AbortController();
      const unary = t.conversation.send(OpenCodeStreamCase.request(), { signal: caller.signal });
      await t.server.waitForMessages(1);
      t.server.beginText();
      await t.waitForAdmission();
      caller.abort();
      await expect(unary, 'only the unary prompt observer is cancelled').rejects.toMatchObject({
        kind: 'cancelled',
      });
      await eventually('dropping the actual unary observer to durably end its waiter', async () =>
        (await t.snapshot())?.value.waiter === 'lost' ? true : undefined,
      );
      t.server.malformedStreamResponse = true;
      t.faults.setPersistenceFault('response_loss');
      t.server.release();
    } else if (isTerminal(c)) {
      t.faults.waiterFault = true;
      ({ events } = await t.stream());
      t.server.beginText();
      t.server.release();
    } else if (isIdle(c)) {
      t.server.malformedStreamResponse = true;
      t.faults.setPersistenceFault('response_loss');
      ({ events } = await t.stream());
      t.server.beginText();
      t.server.delta(
        'evt_reconciliation_admitted',
        t.server.assistantId ?? '',
        'prt_stream_text',
        'text',
        'accepted',
      );
      const delta = await OpenCodeStreamCase.nextDelta(events);
      expect(delta, 'real admitted delta must be observed').toMatchObject({
        partId: 'prt_stream_text',
        delta: 'accepted',
      });
      await t.waitForAdmission();
      t.server.release();
    } else {
      ({ events } = await t.streamWithAdmissionFault());
    }
    await eventually('setup to enter its actual durable failure', async () => {
      const attempts = isTerminal(c) ? t.faults.waiterFaultAttempts : t.faults.persistenceAttempts;
      return attempts !== 0 ? true : undefined;
    });
    if (events) {
      const error = await OpenCodeStreamCase.terminalError(events);
      expect(ConversationError.isInstance(error), String(error)).toBe(true);
      expect((error as ConversationError).kind, String(error)).toBe(
        isIdle(c) && !isTerminal(c) ? 'protocol' : 'timeout',
      );
      expect(await events.next()).toEqual({ done: true, value: undefined });
    } else {
      expect(
        t.server.stats.promptResponses,
        'the real malformed HTTP response must precede its failed persistence',
      ).toBe(1);
    }
    if (!isTerminal(c)) await t.assertPersistenceRetriesStopped();
    // The original foreground holds nothing any more: no request, no timer.
    await t.waitForQuiescence();

    const original = await t.snapshot();
    if (!original) throw new Error('real original prompt state must remain');
    const phase = original.value.phase as { phase: string; outcome?: { outcome: string } };
    expect(phase.phase === 'terminal').toBe(isTerminal(c));
    if (isTerminal(c)) {
      expect(phase.outcome?.outcome).toBe('success');
      expect(original.value.waiter).toBe('delivering');
    } else if (c === 'noop_rollback_failure') {
      expect(phase.phase).toBe('admitted');
      expect(original.value.cancellation).toEqual({ state: 'not_requested' });
      expect(original.value.waiter).toBe('lost');
    } else if (isIdle(c)) {
      expect(phase.phase).toBe('admitted');
      expect(original.value.cancellation).toEqual({ state: 'not_requested' });
      expect(
        original.value.waiter,
        'the failed response-loss transaction must not fabricate a waiter transition',
      ).toBe('waiting');
    }
    expect(t.server.stats.messages).toBe(1);
    expect(t.server.stats.aborts).toBe(0);

    // ---- the recovered abort, with its fault armed for this observer only ----
    t.faults.setPersistenceFault('none');
    t.faults.waiterFault = false;
    if (isIdle(c)) {
      t.server.markNativeIdle();
      // The seed's server holds no answer for lost native work; the real one keeps it
      // (recovered by parentID, tested on its own).
      t.server.forgetAnswers();
    } else t.server.markNativeActive();
    t.faults.rollbackFailure = c === 'read_rollback_failure' || c === 'noop_rollback_failure';
    const key = PromptFaultStore.promptKey(t.conversation.id());
    if (isTerminal(c)) t.faults.armTerminalReconciliation(faultOf[c], 'first', key);
    else t.faults.armAbortReconciliation(faultOf[c], 'first', key);
    const started = performance.now();
    const firstAbort = t.faults.scope('first', () => t.conversation.abort({ signal: firstObserver.signal }));
    pending.push(firstAbort.catch(() => undefined));
    let uncertainRecord: Snapshot | undefined;
    let result: Settled;
    if (isDropped(c)) {
      await before(
        t.faults.blocked(),
        firstAbort,
        'the deletion receipt boundary must be reached before the abort returns',
      );
      const gateRecord = await t.snapshot();
      expect(gateRecord === undefined).toBe(c === 'dropped_commit_observer');
      if (c === 'dropped_unknown_observer') {
        uncertainRecord = gateRecord;
        const receipt = t.faults.preparedCancelReceipt();
        expect(receipt.deletes).toBe(1);
        expect(receipt.commits).toBe(0);
        expect(
          receipt.receiptReads,
          'first observer must already hold the actual unknown-commit readback',
        ).toBe(1);
      }
      t.faults.armReconciliationObserver('second', key);
      const secondAbort = t.faults.scope('second', () => t.conversation.abort());
      pending.push(secondAbort.catch(() => undefined));
      await before(
        t.faults.waitReconciliationObserver(),
        secondAbort,
        'the second observer must attach to the retained generation before the first is lost',
      );
      firstObserver.abort();
      const stopped = await settle(firstAbort);
      expect(errorOf(stopped, 'only the first observer is cancelled').kind).toBe('cancelled');
      t.faults.release();
      t.faults.releaseReconciliationObserver();
      result = await settle(secondAbort);
    } else {
      result = await settle(firstAbort);
    }
    const receipt = t.faults.preparedCancelReceipt();
    const { before: seen, intentRecord } = receipt;

    if (!seen) throw new Error('fault boundary must read the actual retained generation');
    expect(seen.key).toBe(original.key);
    expect(seen.value.message_id).toBe(original.value.message_id);
    expect(seen.value.request_part_id).toBe(original.value.request_part_id);
    if (!isTerminal(c)) {
      expect(receipt.activationReads).toBeGreaterThanOrEqual(1);
      expect(receipt.activationRollbacks).toBeGreaterThanOrEqual(1);
      if (!intentRecord) throw new Error('the original cancellation intent must be committed');
      expect(intentRecord.value.cancellation).toEqual({ state: 'requested' });
      expect(intentRecord.value.message_id).toBe(original.value.message_id);
    }
    expect(receipt.accessesBeforeRollback).toBe(0);
    expect(receipt.deletesAfterCommit).toBe(0);
    expect(receipt.writesAfterCommit).toBe(0);
    expect(t.server.stats.messages).toBe(1);

    switch (c) {
      case 'read_rollback_failure': {
        const error = errorOf(result, 'failed rollback cannot authorize another attempt');
        expect(error.kind).toBe('conflict');
        expect(error.context.phase).toBe('state_read');
        expect(error.detail).toEqual({ kind: 'transaction_conflict' });
        expect(error.supplementary, 'rollback failure must remain').toHaveLength(1);
        const [cleanup] = error.supplementary;
        expect(cleanup?.context.phase).toBe('cleanup');
        expect(cleanup?.detail).toEqual({ kind: 'service_unavailable' });
        expect(receipt.faults).toBe(1);
        expect(receipt.rollbackFailures).toBe(1);
        break;
      }
      case 'noop_rollback_failure': {
        const error = errorOf(result, 'unchanged reconciliation must settle its transaction');
        expect(error.kind).toBe('integration');
        expect(error.context.phase).toBe('cleanup');
        expect(error.detail).toEqual({ kind: 'service_unavailable' });
        expect(receipt.rollbackFailures).toBe(1);
        expect(receipt.deletes).toBe(0);
        expect(receipt.puts, 'the selected reconciliation must really be unchanged').toBe(0);
        expect(seen.value.waiter).toBe('lost');
        break;
      }
      case 'persistent_read_conflict': {
        const error = errorOf(result, 'persistent definite read conflicts must remain bounded');
        expect(error.kind).toBe('timeout');
        expect(error.context).toEqual({ operation: 'abort', phase: 'reconciliation' });
        expect(error.detail).toEqual({ kind: 'deadline_elapsed', deadline: 'operation', timeoutMs: null });
        expect(error.supplementary, 'last read conflict must survive').toHaveLength(1);
        const [last] = error.supplementary;
        expect(last?.context.phase).toBe('state_read');
        expect(last?.detail).toEqual({ kind: 'transaction_conflict' });
        expect(receipt.faults).toBeGreaterThan(1);
        expect(receipt.rollbacks).toBe(receipt.faults);
        // Node's timers run on libuv's millisecond clock, which can fire up to 1 ms before
        // `performance.now()` says the delay has passed (399.9 ms seen for 400).
        expect(performance.now() - started).toBeGreaterThanOrEqual(ABORT_DEADLINE_MS - 1);
        await new Promise((resolve) => setTimeout(resolve, 60));
        const after = t.faults.preparedCancelReceipt();
        expect(after.reads).toBe(receipt.reads);
        expect(after.begins).toBe(receipt.begins);
        expect(after.deletes).toBe(receipt.deletes);
        break;
      }
      case 'unknown_receipt':
      case 'foreign_receipt':
      case 'unknown_receipt_read_failure':
      case 'terminal_unknown_receipt':
      case 'dropped_unknown_observer': {
        const error = errorOf(result, 'unconfirmed commit cannot release or repeat this transition');
        let uncertainty = error;
        if (c === 'dropped_unknown_observer' && error.kind === 'timeout') {
          expect(error.context.phase).toBe('reconciliation');
          expect(error.detail).toEqual({ kind: 'deadline_elapsed', deadline: 'operation', timeoutMs: null });
          expect(error.supplementary, 'known commit uncertainty must remain').toHaveLength(1);
          uncertainty = error.supplementary[0] as ConversationError;
        }
        expect(uncertainty.kind, uncertainty.message).toBe('integration');
        expect(uncertainty.context.phase).toBe('state_commit');
        expect(uncertainty.detail).toEqual({ kind: 'service_unavailable' });
        expect(receipt.deletes).toBe(1);
        expect(receipt.commitAttempts).toBe(1);
        expect(receipt.commits).toBe(0);
        expect(receipt.receiptReads).toBeGreaterThanOrEqual(1);
        const retained = await t.snapshot();
        expect(retained?.value.message_id).toBe(original.value.message_id);
        if (uncertainRecord) {
          expect(retained, 'unknown observer loss cannot rewrite the real retained record').toEqual(
            uncertainRecord,
          );
        }
        if (c === 'unknown_receipt_read_failure') expect(receipt.receiptReadFailures).toBe(1);
        break;
      }
      default: {
        if (isIdle(c) && !isTerminal(c)) {
          const error = errorOf(result, 'quiescent lost native work must preserve repaired InvalidState');
          expect(error.kind, error.message).toBe('invalid_state');
          expect(error.context.operation).toBe('abort');
          if (c === 'dropped_commit_observer') expect(error.context.phase).toBe('cancellation');
        } else if (!result.ok) {
          throw new Error(`confirmed cleanup must preserve its original completion: ${result.error.message}`);
        }
        if (isIdle(c)) {
          expect(receipt.commits).toBe(1);
          expect(receipt.deletes).toBe(c === 'delete_conflict' || c === 'commit_conflict' ? 2 : 1);
          expect(await t.snapshot()).toBeUndefined();
        }
        if (c === 'lost_receipt' || c === 'lost_receipt_read_failure') {
          expect(receipt.absentReceipts).toBeGreaterThanOrEqual(1);
        }
        if (c === 'lost_receipt_read_failure') expect(receipt.receiptReadFailures).toBe(1);
        if (c === 'dropped_commit_observer') {
          await expect(
            t.conversation.abort(),
            'a genuinely later abort must be idle after repaired outcome publication',
          ).resolves.toEqual({ kind: 'idle' });
        }
      }
    }
    expect(t.server.stats.aborts).toBe(c === 'read_conflict' || c === 'begin_conflict' ? 1 : 0);
  } finally {
    firstObserver.abort();
    t.faults.setPersistenceFault('none');
    t.faults.waiterFault = false;
    t.faults.rollbackFailure = false;
    t.faults.release();
    t.faults.releaseReconciliationObserver();
    await Promise.all(pending);
    await t.revoke();
  }
}

describe('abort reconciliation (seed: conversation-abort-reconciliation)', () => {
  it('a read conflict retries after rollback', () => verify('read_conflict'));
  it('a failed rollback is surfaced and authorises no further attempt', () =>
    verify('read_rollback_failure'));
  it('persistent conflicts end at the original operation deadline', () => verify('persistent_read_conflict'));
  it('an unchanged reconciliation still needs a confirmed rollback', () => verify('noop_rollback_failure'));
  it('a begin conflict retries without effects', () => verify('begin_conflict'));
  it('a delete conflict recomputes only uncommitted work', () => verify('delete_conflict'));
  it('a commit conflict recomputes only uncommitted work', () => verify('commit_conflict'));
  it('a lost commit receipt is read back', () => verify('lost_receipt'));
  it('an unknown commit outcome never deletes again', () => verify('unknown_receipt'));
  it('a foreign receipt never confirms', () => verify('foreign_receipt'));
  it('a failed read of a lost receipt keeps the exact outcome', () => verify('lost_receipt_read_failure'));
  it('a failed receipt read keeps the primary commit error', () => verify('unknown_receipt_read_failure'));
  it('terminal reconciliation clears a real success', () => verify('terminal_delete'));
  it('terminal reconciliation with an unknown receipt never deletes again', () =>
    verify('terminal_unknown_receipt'));
  it('a dropped observer leaves the repaired outcome to a second observer of the same generation', () =>
    verify('dropped_commit_observer'));
  it('an unknown delete survives the loss of an overlapping observer', () =>
    verify('dropped_unknown_observer'));
});
