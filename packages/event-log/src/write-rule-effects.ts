import type { Kysely } from 'kysely';
import { changesNothing } from './append-rules.js';
import { writeApprovalEffects } from './approval-effects.js';
import type { AcceptedWrite } from './insert-events.js';
import { run, type Statements } from './log-dialect.js';
import type { LogDatabase } from './log-schema.js';
import { slot, templated } from './statement-templates.js';

/**
 * Writes what the accepted events change beside the events table: invocation rows,
 * operation rows and who may open a session next. The tables' keys back the rules up: a second
 * dispatch or a second live invocation in a session fails here even if a rule was
 * skipped.
 */
export function* writeRuleEffects(
  builder: Kysely<LogDatabase>,
  accepted: readonly AcceptedWrite[],
): Statements<void> {
  // Most batches are model facts: nothing to look through.
  if (accepted.every((entry) => changesNothing(entry.effects))) return;
  const opened = accepted.filter((entry) => entry.effects.openInvocation);
  if (opened.length > 0) {
    const values = opened.flatMap(({ row, staged, effects }) => [
      row.session_id,
      row.invocation_id,
      staged.event.invocation.turnId,
      row.run_id,
      row.sequence,
      effects.owner?.hostId ?? null,
      effects.owner?.epoch ?? null,
      effects.submission ?? null,
    ]);
    const build = () =>
      builder
        .insertInto('invocations')
        .values(
          opened.map((_, at) => {
            const value = (column: number) => slot(at * 8 + column) as never;
            return {
              session_id: value(0),
              invocation_id: value(1),
              turn_id: value(2),
              run_id: value(3),
              opened_sequence: value(4),
              ended_sequence: null,
              terminal: null,
              live: 1,
              owner_host_id: value(5),
              owner_epoch: value(6),
              fence: 0,
              idempotency_key: value(7),
            };
          }),
        )
        .compile();
    yield* run(templated(builder, `invocations.insert.${opened.length}`, build, values));
  }
  for (const { row, effects } of accepted) {
    if (!effects.takeOver || !effects.owner) continue;
    // The fence moves in the transaction that records the takeover's first fact.
    yield* run(
      builder
        .updateTable('invocations')
        .set((eb) => ({
          owner_host_id: effects.owner!.hostId,
          owner_epoch: effects.owner!.epoch,
          fence: eb('fence', '+', 1),
        }))
        .where('session_id', '=', row.session_id)
        .where('invocation_id', '=', row.invocation_id)
        .compile(),
    );
  }
  for (const { row, effects } of accepted) {
    if (!effects.endInvocation) continue;
    const build = () =>
      builder
        .updateTable('invocations')
        .set({ ended_sequence: slot(0) as never, terminal: slot(1) as never, live: null })
        .where('session_id', '=', slot(2))
        .where('invocation_id', '=', slot(3))
        .compile();
    const values = [row.sequence, effects.endInvocation.terminal, row.session_id, row.invocation_id];
    yield* run(templated(builder, 'invocations.end', build, values));
  }
  // Before the other operation rows: a settlement in the same batch closes a resumed row.
  yield* writeApprovalEffects(builder, accepted);
  const operations = accepted.filter((entry) => entry.effects.dispatch || entry.effects.reject);
  if (operations.length > 0) {
    const values = operations.flatMap(({ row, effects }) => [
      row.session_id,
      (effects.dispatch ?? effects.reject)!.operationId,
      row.invocation_id,
      effects.dispatch?.parentOperationId ?? null,
      effects.dispatch ? 'dispatched' : 'rejected',
      row.sequence,
    ]);
    const build = () =>
      builder
        .insertInto('operations')
        .values(
          operations.map((_, at) => {
            const value = (column: number) => slot(at * 6 + column) as never;
            return {
              session_id: value(0),
              operation_id: value(1),
              invocation_id: value(2),
              parent_operation_id: value(3),
              state: value(4),
              sequence: value(5),
            };
          }),
        )
        .compile();
    yield* run(templated(builder, `operations.insert.${operations.length}`, build, values));
  }
  for (const { row, effects } of accepted) {
    if (!effects.close) continue;
    const build = () =>
      builder
        .updateTable('operations')
        .set({ state: 'closed' })
        .where('session_id', '=', slot(0))
        .where('operation_id', '=', slot(1))
        .compile();
    yield* run(templated(builder, 'operations.close', build, [row.session_id, effects.close.operationId]));
  }
  yield* writeSessionAdmission(builder, accepted);
}

function* writeSessionAdmission(
  builder: Kysely<LogDatabase>,
  accepted: readonly AcceptedWrite[],
): Statements<void> {
  const admission = new Map<string, { live: string | null; held: string | null }>();
  for (const { row, effects } of accepted) {
    if (effects.openInvocation) admission.set(row.session_id, { live: row.invocation_id, held: null });
    if (effects.endInvocation)
      admission.set(row.session_id, { live: null, held: effects.endInvocation.heldFor });
  }
  if (admission.size === 0) return;
  const values = [...admission].flatMap(([sessionId, state]) => [sessionId, state.live, state.held]);
  const build = () =>
    builder
      .insertInto('sessions')
      .values(
        [...admission].map((_, at) => ({
          session_id: slot(at * 3),
          live_invocation_id: slot(at * 3 + 1),
          held_for_invocation_id: slot(at * 3 + 2),
        })),
      )
      .onConflict((conflict) =>
        conflict.column('session_id').doUpdateSet((eb) => ({
          live_invocation_id: eb.ref('excluded.live_invocation_id'),
          held_for_invocation_id: eb.ref('excluded.held_for_invocation_id'),
        })),
      )
      .compile();
  yield* run(templated(builder, `sessions.admission.${admission.size}`, build, values));
}
