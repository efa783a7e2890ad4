import type { ErrorOperation } from './conversation-error.js';
import { ConversationError } from './conversation-error.js';
import { digestWrites } from './digest-writes.js';
import { mapStoreError } from './map-store-error.js';
import { type PromptRecord, PromptRecordShapeError, parsePromptRecord } from './prompt-record.js';
import type { PromptStore, PromptTransaction, PromptWrite, TransactionPurpose } from './prompt-store.js';

/**
 * A store transaction seen through the conversation: typed prompt records, every
 * failure already a `ConversationError` naming its phase, and the writes remembered so
 * that a commit receipt can be checked against them.
 */
export class TrackedTransaction {
  readonly #inner: PromptTransaction;
  readonly #operation: ErrorOperation;
  readonly #writes: PromptWrite[] = [];

  private constructor(inner: PromptTransaction, operation: ErrorOperation) {
    this.#inner = inner;
    this.#operation = operation;
  }

  /** Opens a transaction; a failure is a `ConversationError` in phase `state_begin`. */
  static async begin(
    store: PromptStore,
    options: { purpose: TransactionPurpose; operation: ErrorOperation },
  ): Promise<TrackedTransaction> {
    try {
      return new TrackedTransaction(await store.begin({ purpose: options.purpose }), options.operation);
    } catch (error) {
      throw mapStoreError(error, { operation: options.operation, phase: 'state_begin' });
    }
  }

  get id(): string {
    return this.#inner.id;
  }

  /** Digest a receipt of this transaction must carry. */
  expectedDigest(): string {
    return digestWrites(this.#writes);
  }

  /** The prompt record under `key`, parsed. */
  async read(key: string): Promise<PromptRecord | undefined> {
    let value: unknown;
    try {
      value = await this.#inner.read(key);
    } catch (error) {
      throw mapStoreError(error, { operation: this.#operation, phase: 'state_read' });
    }
    if (value === undefined || value === null) return undefined;
    try {
      return parsePromptRecord(value);
    } catch (error) {
      const where = error instanceof PromptRecordShapeError ? `${error.path}: ${error.reason}` : '$';
      throw new ConversationError(`stored prompt record ${key} does not parse at ${where}`, {
        kind: 'integration',
        context: { operation: this.#operation, phase: 'state_read' },
        cause: error,
      });
    }
  }

  async put(key: string, record: PromptRecord): Promise<void> {
    // The JSON round trip is what the store keeps; the digest must see the same value.
    const value = JSON.parse(JSON.stringify(record)) as unknown;
    try {
      await this.#inner.put(key, value);
    } catch (error) {
      throw mapStoreError(error, { operation: this.#operation, phase: 'state_write' });
    }
    this.#writes.push({ op: 'put', key, value });
  }

  async delete(key: string): Promise<void> {
    try {
      await this.#inner.delete(key);
    } catch (error) {
      throw mapStoreError(error, { operation: this.#operation, phase: 'state_write' });
    }
    this.#writes.push({ op: 'delete', key });
  }

  /** Commits; resolves to the receipt or throws the store's failure unmapped (the runner classifies it). */
  commit() {
    return this.#inner.commit();
  }

  /** Rolls back; a failure is a `ConversationError` in phase `cleanup`. */
  async rollback(): Promise<void> {
    try {
      await this.#inner.rollback();
    } catch (error) {
      throw new ConversationError(`rollback failed; the transaction's effect on the store is unknown`, {
        kind: 'integration',
        context: { operation: this.#operation, phase: 'cleanup' },
        detail: { kind: 'service_unavailable' },
        cause: error,
      });
    }
  }
}
