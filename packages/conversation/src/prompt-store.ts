/**
 * Why a transaction is opened. Stores may use it for tracing; it never changes what a
 * transaction does.
 */
export type TransactionPurpose =
  | 'admission'
  | 'observer_release'
  | 'response'
  | 'response_loss'
  | 'delivery'
  | 'abort_activation'
  | 'abort_intent'
  | 'abort_reconciliation'
  | 'inspection';

/**
 * Proof that a transaction committed: its id and the digest of its writes
 * (`digestWrites`). A receipt confirms a commit only if both match the transaction.
 */
export type CommitReceipt = { readonly transactionId: string; readonly digest: string };

/** One write of a transaction, in order. `value` is a JSON value. */
export type PromptWrite =
  | { readonly op: 'put'; readonly key: string; readonly value: unknown }
  | { readonly op: 'delete'; readonly key: string };

/**
 * One open transaction. Each step either applies or throws `PromptStoreError`
 * (`conflict`: definitely not applied; `unavailable`: unknown). After any failure the
 * caller rolls back before touching the store again. `rollback` after `commit` (or a
 * second `rollback`) does nothing.
 */
export interface PromptTransaction {
  /** Unique id of this transaction; receipts are looked up by it. */
  readonly id: string;
  /** The JSON value stored under `key`, or `undefined`. */
  read(key: string): Promise<unknown>;
  /** Stores `value` (JSON) under `key`, replacing what was there. */
  put(key: string, value: unknown): Promise<void>;
  /** Removes `key`; removing an absent key is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Makes the writes durable, together with a receipt readable through
   * `PromptStore.readReceipt`. A `conflict` means nothing was written; `unavailable`
   * means the outcome is unknown and only a receipt can confirm it.
   */
  commit(): Promise<CommitReceipt>;
  /** Discards the transaction. */
  rollback(): Promise<void>;
}

/**
 * A small transactional key-value store of JSON prompt records. Implementations exist
 * over Kysely (SQLite by default, PostgreSQL); tests wrap one to inject faults.
 */
export interface PromptStore {
  /** Opens a transaction. A `conflict` here opened nothing. */
  begin(options: {
    readonly purpose: TransactionPurpose;
    readonly signal?: AbortSignal;
  }): Promise<PromptTransaction>;
  /** The receipt a committed transaction left behind, or `undefined` if none is visible. */
  readReceipt(
    transactionId: string,
    options?: { readonly signal?: AbortSignal },
  ): Promise<CommitReceipt | undefined>;
  /** Releases the store's connections. */
  close(): Promise<void>;
}
