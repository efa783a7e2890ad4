import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type CommitReceipt,
  type PromptStore,
  PromptStoreError,
  type PromptTransaction,
  promptKey,
  type TransactionPurpose,
} from '../../src/index.js';
import { type Deferred, deferred } from './deferred.js';

/** A fault injected into the abort's durable reconciliation, after its intent committed. */
export type PreparedCancelFault =
  | 'none'
  | 'load_conflict_once'
  | 'load_conflict'
  | 'begin_conflict_once'
  | 'delete_conflict_once'
  | 'commit_conflict_once'
  | 'commit_receipt_lost'
  | 'commit_unavailable_once'
  | 'commit_unavailable_foreign_receipt'
  | 'commit_receipt_lost_read_unavailable_once'
  | 'commit_unavailable_read_unavailable_once'
  | 'commit_receipt_held'
  | 'commit_unavailable_read_held';

/** A fault injected into the prompt driver's own bookkeeping. */
export type PromptPersistenceFault = 'none' | 'admission' | 'response_loss';

/** A stored record as the backing store holds it. */
export type Snapshot = { readonly key: string; readonly value: Record<string, unknown> };

/** What the armed observer did to the store, counted from the moment it was armed. */
export type PreparedCancelReceipt = {
  activationReads: number;
  activationRollbacks: number;
  begins: number;
  reads: number;
  puts: number;
  deletes: number;
  commitAttempts: number;
  commits: number;
  rollbacks: number;
  rollbackFailures: number;
  faults: number;
  receiptReads: number;
  receiptReadFailures: number;
  absentReceipts: number;
  accessesBeforeRollback: number;
  deletesAfterCommit: number;
  writesAfterCommit: number;
  before: Snapshot | undefined;
  intentRecord: Snapshot | undefined;
};

type Armed = {
  readonly fault: PreparedCancelFault;
  readonly observer: string;
  readonly key: string;
  phase: 'activation' | 'prepared';
  readonly used: Set<string>;
  pendingRollback: boolean;
  afterCommit: boolean;
};

const emptyReceipt = (): PreparedCancelReceipt => ({
  activationReads: 0,
  activationRollbacks: 0,
  begins: 0,
  reads: 0,
  puts: 0,
  deletes: 0,
  commitAttempts: 0,
  commits: 0,
  rollbacks: 0,
  rollbackFailures: 0,
  faults: 0,
  receiptReads: 0,
  receiptReadFailures: 0,
  absentReceipts: 0,
  accessesBeforeRollback: 0,
  deletesAfterCommit: 0,
  writesAfterCommit: 0,
  before: undefined,
  intentRecord: undefined,
});

const conflict = (what: string) => PromptStoreError.conflict(`injected ${what} conflict`);
const unavailable = (what: string) => PromptStoreError.unavailable(`injected ${what} unavailability`);

/**
 * Wraps a real store and injects faults. Observers are told apart the way tasks are:
 * each `abort()` runs inside `scope(name, ...)` (async context), and faults armed for
 * an observer apply only to store calls made on its behalf, for one key. Counting
 * switches from "activation" to "prepared" when that observer commits the record with
 * `cancellation: requested` (its intent), unless armed for a terminal reconciliation.
 */
export class PromptFaultStore implements PromptStore {
  readonly inner: PromptStore;
  readonly #scope = new AsyncLocalStorage<string>();
  #armed: Armed | undefined;
  #receipt = emptyReceipt();
  #persistence: PromptPersistenceFault = 'none';
  #admissionFaulted = false;
  /** Bookkeeping attempts that hit the persistence fault. */
  persistenceAttempts = 0;
  /** Make every delivery (hand-over) transaction conflict. */
  waiterFault = false;
  /** Delivery transactions that hit the waiter fault. */
  waiterFaultAttempts = 0;
  /** Make the armed observer's rollbacks fail (after really rolling back). */
  rollbackFailure = false;
  #blocked = deferred();
  #release = deferred();
  #observerGate: { observer: string; key: string; reached: Deferred; release: Deferred } | undefined;

  constructor(inner: PromptStore) {
    this.inner = inner;
  }

  /** The key of a conversation's prompt record. */
  static promptKey(conversationId: string): string {
    return promptKey(conversationId);
  }

  /** Runs `work` as observer `name`. */
  scope<T>(name: string, work: () => Promise<T>): Promise<T> {
    return this.#scope.run(name, work);
  }

  setPersistenceFault(fault: PromptPersistenceFault): void {
    this.#persistence = fault;
    this.#admissionFaulted = false;
  }

  armAbortReconciliation(fault: PreparedCancelFault, observer: string, key: string): void {
    this.#arm(fault, observer, key, 'activation');
  }

  armTerminalReconciliation(fault: PreparedCancelFault, observer: string, key: string): void {
    this.#arm(fault, observer, key, 'prepared');
  }

  disarm(): void {
    this.#armed = undefined;
  }

  /** Holds observer `observer`'s next read of `key` until `releaseReconciliationObserver`. */
  armReconciliationObserver(observer: string, key: string): void {
    this.#observerGate = { observer, key, reached: deferred(), release: deferred() };
  }

  /** Resolves once the gated observer's read is held. */
  waitReconciliationObserver(): Promise<void> {
    return this.#observerGate?.reached.promise ?? Promise.reject(new Error('no observer gate armed'));
  }

  releaseReconciliationObserver(): void {
    this.#observerGate?.release.resolve();
  }

  /** Resolves once the armed fault holds the observer at its receipt boundary. */
  blocked(): Promise<void> {
    return this.#blocked.promise;
  }

  /** Lets a held receipt boundary go on. */
  release(): void {
    this.#release.resolve();
  }

  preparedCancelReceipt(): PreparedCancelReceipt {
    return { ...this.#receipt };
  }

  /** The record as the backing store holds it, read outside every fault. */
  async snapshot(key: string): Promise<Snapshot | undefined> {
    const tx = await this.inner.begin({ purpose: 'inspection' });
    try {
      const value = await tx.read(key);
      return value === undefined ? undefined : { key, value: value as Record<string, unknown> };
    } finally {
      await tx.rollback();
    }
  }

  async begin(options: { readonly purpose: TransactionPurpose; readonly signal?: AbortSignal }) {
    const armed = this.#observed();
    if (armed?.phase === 'prepared') {
      this.#access(armed);
      this.#receipt.begins += 1;
      // A begin that failed opened nothing: no rollback is owed for it.
      if (this.#once(armed, 'begin_conflict_once', false)) throw conflict('begin');
    }
    if (options.purpose === 'response_loss' && this.#persistence === 'response_loss') {
      this.persistenceAttempts += 1;
      throw unavailable('response-loss begin');
    }
    const inner = await this.inner.begin(options);
    return new FaultTransaction(this, inner, { purpose: options.purpose, armed });
  }

  async readReceipt(transactionId: string): Promise<CommitReceipt | undefined> {
    const armed = this.#observed();
    if (armed?.phase !== 'prepared') return this.inner.readReceipt(transactionId);
    this.#access(armed);
    this.#receipt.receiptReads += 1;
    switch (armed.fault) {
      case 'commit_unavailable_foreign_receipt':
        return { transactionId: `foreign-${transactionId}`, digest: 'sha256:foreign' };
      case 'commit_receipt_lost_read_unavailable_once':
      case 'commit_unavailable_read_unavailable_once':
        if (!armed.used.has('receipt_read')) {
          armed.used.add('receipt_read');
          this.#receipt.receiptReadFailures += 1;
          throw unavailable('receipt read');
        }
        break;
      case 'commit_unavailable_read_held':
        await this.#hold();
        break;
    }
    return this.inner.readReceipt(transactionId);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  // ---- used by FaultTransaction ----

  /** The armed state when the current call is the armed observer's. */
  #observed(): Armed | undefined {
    const armed = this.#armed;
    return armed && this.#scope.getStore() === armed.observer ? armed : undefined;
  }

  async beforeRead(key: string, meta: TransactionMeta, read: () => Promise<unknown>): Promise<unknown> {
    const gate = this.#observerGate;
    if (gate && gate.key === key && this.#scope.getStore() === gate.observer) {
      this.#observerGate = { ...gate, observer: `${gate.observer} (passed)` };
      gate.reached.resolve();
      await gate.release.promise;
    }
    const armed = meta.armed;
    if (!armed || key !== armed.key) return read();
    if (armed.phase === 'activation') {
      this.#receipt.activationReads += 1;
      return read();
    }
    this.#access(armed);
    this.#receipt.reads += 1;
    const value = await read();
    this.#receipt.before ??=
      value === undefined ? undefined : { key, value: value as Record<string, unknown> };
    if (armed.fault === 'load_conflict') {
      this.#fault(armed);
      throw conflict('read');
    }
    if (this.#once(armed, 'load_conflict_once')) throw conflict('read');
    return value;
  }

  beforeWrite(op: 'put' | 'delete', meta: TransactionMeta): void {
    if (meta.purpose === 'delivery' && this.waiterFault && op === 'delete') {
      this.waiterFaultAttempts += 1;
      throw conflict('delivery delete');
    }
    const armed = meta.armed;
    if (armed?.phase !== 'prepared') return;
    this.#access(armed);
    if (op === 'put') this.#receipt.puts += 1;
    else this.#receipt.deletes += 1;
    if (armed.afterCommit) {
      this.#receipt.writesAfterCommit += 1;
      if (op === 'delete') this.#receipt.deletesAfterCommit += 1;
    }
    if (op === 'delete' && this.#once(armed, 'delete_conflict_once')) throw conflict('delete');
  }

  async commit(
    meta: TransactionMeta,
    inner: PromptTransaction,
    puts: Map<string, unknown>,
  ): Promise<CommitReceipt> {
    if (meta.purpose === 'admission' && this.#persistence === 'admission' && !this.#admissionFaulted) {
      this.#admissionFaulted = true;
      this.persistenceAttempts += 1;
      throw conflict('admission commit');
    }
    const armed = meta.armed;
    if (!armed) return inner.commit();
    if (armed.phase === 'activation') {
      const receipt = await inner.commit();
      const intent = puts.get(armed.key) as { cancellation?: { state?: string } } | undefined;
      if (intent?.cancellation?.state === 'requested') {
        this.#receipt.intentRecord = { key: armed.key, value: intent as Record<string, unknown> };
        armed.phase = 'prepared';
      }
      return receipt;
    }
    this.#access(armed);
    this.#receipt.commitAttempts += 1;
    if (this.#once(armed, 'commit_conflict_once')) throw conflict('commit');
    switch (armed.fault) {
      case 'commit_unavailable_once':
      case 'commit_unavailable_foreign_receipt':
      case 'commit_unavailable_read_unavailable_once':
      case 'commit_unavailable_read_held':
        if (!armed.used.has('commit')) {
          armed.used.add('commit');
          this.#fault(armed);
          armed.afterCommit = true;
          throw unavailable('commit');
        }
        break;
      case 'commit_receipt_lost':
      case 'commit_receipt_lost_read_unavailable_once':
        if (!armed.used.has('commit')) {
          armed.used.add('commit');
          await inner.commit();
          this.#receipt.commits += 1;
          this.#receipt.absentReceipts += 1;
          this.#fault(armed);
          armed.afterCommit = true;
          throw unavailable('commit receipt');
        }
        break;
    }
    const receipt = await inner.commit();
    this.#receipt.commits += 1;
    armed.afterCommit = true;
    if (armed.fault === 'commit_receipt_held') await this.#hold();
    return receipt;
  }

  async rollback(meta: TransactionMeta, inner: PromptTransaction): Promise<void> {
    const armed = meta.armed;
    await inner.rollback();
    if (!armed) return;
    if (armed.phase === 'activation') {
      this.#receipt.activationRollbacks += 1;
      return;
    }
    this.#receipt.rollbacks += 1;
    armed.pendingRollback = false;
    if (this.rollbackFailure) {
      this.#receipt.rollbackFailures += 1;
      throw unavailable('rollback');
    }
  }

  #arm(fault: PreparedCancelFault, observer: string, key: string, phase: Armed['phase']): void {
    this.#armed = {
      fault,
      observer,
      key,
      phase,
      used: new Set(),
      pendingRollback: false,
      afterCommit: false,
    };
    this.#receipt = emptyReceipt();
    this.#blocked = deferred();
    this.#release = deferred();
  }

  /** True (and consumed) the first time `fault` is the armed one-shot fault. */
  #once(armed: Armed, fault: PreparedCancelFault, owesRollback = true): boolean {
    if (armed.fault !== fault || armed.used.has(fault)) return false;
    armed.used.add(fault);
    this.#fault(armed, owesRollback);
    return true;
  }

  #fault(armed: Armed, owesRollback = true): void {
    this.#receipt.faults += 1;
    if (owesRollback) armed.pendingRollback = true;
  }

  #access(armed: Armed): void {
    if (armed.pendingRollback) this.#receipt.accessesBeforeRollback += 1;
  }

  async #hold(): Promise<void> {
    this.#blocked.resolve();
    await this.#release.promise;
  }
}

type TransactionMeta = { readonly purpose: TransactionPurpose; readonly armed: Armed | undefined };

class FaultTransaction implements PromptTransaction {
  readonly #store: PromptFaultStore;
  readonly #inner: PromptTransaction;
  readonly #meta: TransactionMeta;
  readonly #puts = new Map<string, unknown>();

  constructor(store: PromptFaultStore, inner: PromptTransaction, meta: TransactionMeta) {
    this.#store = store;
    this.#inner = inner;
    this.#meta = meta;
  }

  get id(): string {
    return this.#inner.id;
  }

  read(key: string): Promise<unknown> {
    return this.#store.beforeRead(key, this.#meta, () => this.#inner.read(key));
  }

  async put(key: string, value: unknown): Promise<void> {
    this.#store.beforeWrite('put', this.#meta);
    await this.#inner.put(key, value);
    this.#puts.set(key, value);
  }

  async delete(key: string): Promise<void> {
    this.#store.beforeWrite('delete', this.#meta);
    await this.#inner.delete(key);
    this.#puts.delete(key);
  }

  commit(): Promise<CommitReceipt> {
    return this.#store.commit(this.#meta, this.#inner, this.#puts);
  }

  rollback(): Promise<void> {
    return this.#store.rollback(this.#meta, this.#inner);
  }
}
