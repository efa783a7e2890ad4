import { canonicalJson } from '@factum/agent-facts';
import type { LedgerEntry } from './child/ledger.js';
import { LEDGERED_TOOLS } from './child/torture-tools.js';
import type { LeaseRecord } from './lease-history.js';
import type { LogSnapshot } from './log-snapshot.js';

/** One broken promise: which rule, and what exactly. */
export type Violation = { readonly rule: string; readonly detail: string };

/** When the check runs: right after a kill, or after recovery and reconciliation. */
export type CheckPhase = 'after_kill' | 'after_recovery';

type Operation = { invocationId: string; name: string; key: string | undefined };

/**
 * Checks a reopened log against the ledger (the world). Returns how many individual
 * checks ran and every violation:
 * - at_most_once: no key twice in the ledger; no operation dispatched twice.
 * - t1_before_effect: every effect in the ledger has its dispatch in the log.
 * - never_forgotten: every effect is settled, reconciled, or listed as uncertain; every
 *   open dispatch is listed as uncertain, and nothing else is.
 * - no_fabricated_success: every settlement of a ledgered tool has its effect in the
 *   ledger; a reconciliation says succeeded exactly when the effect is there.
 * - sealed: nothing of an invocation after its end.
 * - invocations_accounted: every invocation ends or is listed unfinished (after
 *   recovery: ends).
 * - digest_chain: `verifyChain` holds.
 * - approved_only: a call that asked for approval is dispatched only after an
 *   `approval_decided {approved}` of it, and only with exactly the requested input; every
 *   effect of such a call ran with that input (never a denied, expired or undecided one).
 * - effect_within_lease (with `leases`, the committed history of the hosts' leases):
 *   every effect a host ran started while the lease its T1 was written under was live
 *   by what the database had committed at that moment.
 */
export function checkInvariants(
  snapshot: LogSnapshot,
  ledger: { entries: readonly LedgerEntry[]; torn: readonly string[] },
  phase: CheckPhase,
  leases?: readonly LeaseRecord[],
): { checked: number; violations: Violation[] } {
  let checked = 0;
  const violations: Violation[] = [];
  const expect = (ok: boolean, rule: string, detail: () => string) => {
    checked += 1;
    if (!ok) violations.push({ rule, detail: `${phase}: ${detail()}` });
  };

  expect(snapshot.chain.ok, 'digest_chain', () => JSON.stringify(snapshot.chain));
  if (leases !== undefined) {
    for (const entry of ledger.entries) {
      const late = effectAfterLease(entry, leases);
      if (late !== 'not_stamped') expect(late === undefined, 'effect_within_lease', () => late ?? '');
    }
  }
  for (const line of ledger.torn) expect(false, 'ledger_intact', () => `torn ledger line ${line}`);

  const operations = new Map<string, Operation>();
  const byKey = new Map<string, string>();
  const settled = new Map<string, 'succeeded' | 'failed'>();
  const reconciled = new Map<string, 'succeeded' | 'failed' | 'not_run'>();
  const opened = new Set<string>();
  const ended = new Set<string>();
  const requested = new Map<string, unknown>();
  const approved = new Set<string>();
  for (const { sequence, event } of snapshot.events) {
    const fact = event.fact;
    const invocationId = event.invocation.invocationId;
    // Reconciliation is evidence about the past: what the log takes after the end.
    const sealed =
      ended.has(invocationId) &&
      fact.kind !== 'tool_reconciled' &&
      fact.kind !== 'tool_redispatched' &&
      fact.kind !== 'approval_decided' &&
      !(fact.kind === 'tool_notified' && !settled.has(fact.operationId) && !reconciled.has(fact.operationId));
    expect(!sealed, 'sealed', () => `event ${sequence} (${fact.kind}) after ${invocationId} ended`);
    switch (fact.kind) {
      case 'invocation_opened':
        opened.add(invocationId);
        break;
      case 'invocation_ended':
        ended.add(invocationId);
        break;
      case 'approval_requested':
        requested.set(fact.operationId, fact.call.input);
        break;
      case 'approval_decided':
        expect(
          requested.has(fact.operationId),
          'approved_only',
          () => `${fact.operationId} decided, never requested`,
        );
        if (fact.decision === 'approved') approved.add(fact.operationId);
        break;
      case 'tool_dispatched': {
        const id = fact.operationId;
        if (requested.has(id)) {
          expect(approved.has(id), 'approved_only', () => `${id} dispatched without an approval`);
          expect(
            canonicalJson(fact.call.input) === canonicalJson(requested.get(id)),
            'approved_only',
            () => `${id} dispatched with ${canonicalJson(fact.call.input)}, not the approved input`,
          );
        } else {
          expect(fact.call.name !== 'transfer', 'approved_only', () => `${id} ran transfer without asking`);
        }
        expect(!operations.has(id), 'at_most_once', () => `operation ${id} dispatched twice`);
        const input = fact.call.input as { key?: unknown } | null;
        const key =
          LEDGERED_TOOLS.includes(fact.call.name) && typeof input?.key === 'string' ? input.key : undefined;
        operations.set(id, { invocationId, name: fact.call.name, key });
        if (key !== undefined) {
          expect(
            !byKey.has(key),
            'at_most_once',
            () => `key ${key} dispatched by ${byKey.get(key)} and ${id}`,
          );
          byKey.set(key, id);
        }
        break;
      }
      case 'tool_settled':
        expect(
          operations.has(fact.operationId),
          't1_before_effect',
          () => `${fact.operationId} settled, never dispatched`,
        );
        expect(!settled.has(fact.operationId), 'at_most_once', () => `${fact.operationId} settled twice`);
        settled.set(fact.operationId, fact.outcome.kind);
        break;
      case 'tool_reconciled':
        expect(
          operations.has(fact.operationId),
          't1_before_effect',
          () => `${fact.operationId} reconciled, never dispatched`,
        );
        expect(
          !settled.has(fact.operationId),
          'never_forgotten',
          () => `${fact.operationId} reconciled after it settled`,
        );
        if (fact.decision.kind !== 'unknown') reconciled.set(fact.operationId, fact.decision.kind);
        break;
      default:
        break;
    }
  }
  const isClosed = (id: string) => settled.has(id) || reconciled.has(id);

  const inLedger = new Set<string>();
  for (const entry of ledger.entries) {
    expect(!inLedger.has(entry.key), 'at_most_once', () => `the effect of ${entry.key} ran twice`);
    inLedger.add(entry.key);
    const id = byKey.get(entry.key);
    expect(
      id !== undefined,
      't1_before_effect',
      () => `the effect of ${entry.key} ran with no dispatch in the log`,
    );
    if (id === undefined) continue;
    if (entry.tool === 'transfer') {
      const input = requested.get(id) as { amount?: unknown } | undefined;
      expect(
        input !== undefined && approved.has(id) && input.amount === entry.amount,
        'approved_only',
        () => `the effect of ${entry.key} (amount ${String(entry.amount)}) was not approved with that input`,
      );
    }
    const recovery = snapshot.recoveries.get(operations.get(id)!.invocationId);
    expect(
      isClosed(id) || (recovery?.uncertainOperations.includes(id) ?? false),
      'never_forgotten',
      () => `the effect of ${entry.key} (${id}) is neither settled nor listed as uncertain`,
    );
  }

  for (const [id, operation] of operations) {
    const key = operation.key;
    if (key !== undefined) {
      const outcome = settled.get(id);
      if (outcome !== undefined) {
        expect(inLedger.has(key), 'no_fabricated_success', () => `${id} settled ${outcome} with no effect`);
      }
      const decision = reconciled.get(id);
      if (decision !== undefined) {
        expect(
          (decision === 'succeeded') === inLedger.has(key),
          'no_fabricated_success',
          () => `${id} reconciled ${decision} but the ledger ${inLedger.has(key) ? 'has' : 'lacks'} it`,
        );
      }
    }
    const recovery = snapshot.recoveries.get(operation.invocationId);
    if (recovery === undefined) continue;
    const listed = recovery.uncertainOperations.includes(id);
    expect(
      listed === !isClosed(id),
      'never_forgotten',
      () => `${id} is ${listed ? '' : 'not '}listed uncertain`,
    );
    if (phase === 'after_recovery' && (operation.name === 'charge' || operation.name === 'transfer')) {
      expect(
        isClosed(id),
        'never_forgotten',
        () => `${id} (reconcilable) is still uncertain after reconciliation`,
      );
    }
  }

  const unfinished = new Set(snapshot.unfinished.map((invocation) => invocation.invocationId));
  for (const id of opened) {
    expect(ended.has(id) !== unfinished.has(id), 'invocations_accounted', () =>
      ended.has(id) ? `${id} ended but is listed unfinished` : `${id} neither ended nor listed unfinished`,
    );
    if (phase === 'after_recovery') {
      expect(ended.has(id), 'invocations_accounted', () => `${id} is still open after recovery`);
    }
  }
  return { checked, violations };
}

/**
 * Whether the effect `entry` started while its host's lease was live: the lease of its
 * host and epoch, as of the last version the database committed at or before the
 * effect's time, must expire after it. A renewal committed later (its answer held by
 * the network, say) does not count for an effect before it; one committed earlier does,
 * whether or not the host ever heard of it. All processes run on one machine: the
 * effect's time and the database's clock are one clock. Returns what went wrong, or
 * `not_stamped` for an effect of a single host (no host, epoch or time on its line).
 */
export function effectAfterLease(
  entry: LedgerEntry,
  leases: readonly LeaseRecord[],
): string | undefined | 'not_stamped' {
  if (entry.host === undefined || entry.epoch === undefined || entry.at === undefined) return 'not_stamped';
  const { host, epoch, at } = entry;
  const versions = leases.filter((lease) => lease.hostId === host && lease.epoch === epoch);
  let known: LeaseRecord | undefined;
  for (const version of versions) if (version.recordedAt <= at) known = version;
  if (known !== undefined && known.expiresAt > at) return undefined;
  const when = (ms: number) => new Date(ms).toISOString();
  const history = versions
    .map(
      (v) =>
        `committed ${when(v.recordedAt)} expires ${v.expiresAt === 0 ? 'now (released)' : when(v.expiresAt)}`,
    )
    .join('; ');
  return known === undefined
    ? `the effect of ${entry.key} by ${host} (epoch ${epoch}) started at ${when(at)}, before any lease of that epoch was committed (${history || 'no lease rows'})`
    : `the effect of ${entry.key} by ${host} (epoch ${epoch}) started at ${when(at)}, ${at - known.expiresAt} ms after its lease expired; lease versions: ${history}`;
}
