import { randomUUID } from 'node:crypto';
import type { ControlledTransaction, Kysely } from 'kysely';
import { digestWrites } from './digest-writes.js';
import type {
  CommitReceipt,
  PromptStore,
  PromptTransaction,
  PromptWrite,
  TransactionPurpose,
} from './prompt-store.js';
import { PromptStoreError } from './prompt-store-error.js';

/** Tables of the prompt store; plain text and integer columns so every dialect fits. */
export type PromptTables = {
  factum_prompt_records: { key: string; value: string };
  factum_prompt_receipts: { transaction_id: string; digest: string; committed_at: number };
};

/** How a dialect names a conflict, and what a transaction needs to see one. */
export type DialectTraits = {
  /** True when a driver error means "definitely not applied, retry" for this dialect. */
  readonly isConflict: (error: unknown) => boolean;
  /** Isolation to request for each transaction, if the dialect supports choosing. */
  readonly isolation?: 'serializable';
  /** How long receipts are kept for read-back. */
  readonly receiptRetentionMs: number;
  readonly now: () => number;
};

/**
 * A `PromptStore` over any Kysely dialect. Only portable query-builder calls are used
 * (no dialect-specific SQL), so the same class runs over SQLite and PostgreSQL.
 */
export class KyselyPromptStore implements PromptStore {
  readonly #db: Kysely<PromptTables>;
  readonly #traits: DialectTraits;
  readonly #release: () => Promise<void>;
  #closed = false;

  private constructor(db: Kysely<PromptTables>, traits: DialectTraits, release: () => Promise<void>) {
    this.#db = db;
    this.#traits = traits;
    this.#release = release;
  }

  /** Creates the tables if needed and returns the store; `release` runs on `close`. */
  static async create(
    db: Kysely<PromptTables>,
    traits: DialectTraits,
    release: () => Promise<void> = () => db.destroy(),
  ): Promise<KyselyPromptStore> {
    await db.schema
      .createTable('factum_prompt_records')
      .ifNotExists()
      .addColumn('key', 'text', (column) => column.primaryKey())
      .addColumn('value', 'text', (column) => column.notNull())
      .execute();
    await db.schema
      .createTable('factum_prompt_receipts')
      .ifNotExists()
      .addColumn('transaction_id', 'text', (column) => column.primaryKey())
      .addColumn('digest', 'text', (column) => column.notNull())
      .addColumn('committed_at', 'bigint', (column) => column.notNull())
      .execute();
    return new KyselyPromptStore(db, traits, release);
  }

  async begin(options: { readonly purpose: TransactionPurpose; readonly signal?: AbortSignal }) {
    options.signal?.throwIfAborted();
    if (this.#closed) throw PromptStoreError.unavailable('the prompt store is closed');
    const builder = this.#db.startTransaction();
    const trx = await this.#step(
      () => (this.#traits.isolation ? builder.setIsolationLevel(this.#traits.isolation) : builder).execute(),
      'begin',
    );
    return new KyselyPromptTransaction(trx, this.#traits, (work, what) => this.#step(work, what));
  }

  async readReceipt(transactionId: string, options: { readonly signal?: AbortSignal } = {}) {
    options.signal?.throwIfAborted();
    const row = await this.#step(
      () =>
        this.#db
          .selectFrom('factum_prompt_receipts')
          .select(['transaction_id', 'digest'])
          .where('transaction_id', '=', transactionId)
          .executeTakeFirst(),
      'read a receipt',
    );
    return row === undefined ? undefined : { transactionId: row.transaction_id, digest: row.digest };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#release();
  }

  async #step<T>(work: () => Promise<T>, what: string): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (PromptStoreError.isInstance(error)) throw error;
      const reason = this.#traits.isConflict(error) ? 'conflict' : 'unavailable';
      throw new PromptStoreError(reason, `prompt store could not ${what}: ${String(error)}`, {
        cause: error,
      });
    }
  }
}

type Step = <T>(work: () => Promise<T>, what: string) => Promise<T>;

class KyselyPromptTransaction implements PromptTransaction {
  readonly id = randomUUID();
  readonly #trx: ControlledTransaction<PromptTables>;
  readonly #traits: DialectTraits;
  readonly #step: Step;
  readonly #writes: PromptWrite[] = [];

  constructor(trx: ControlledTransaction<PromptTables>, traits: DialectTraits, step: Step) {
    this.#trx = trx;
    this.#traits = traits;
    this.#step = step;
  }

  async read(key: string): Promise<unknown> {
    const row = await this.#step(
      () =>
        this.#trx
          .selectFrom('factum_prompt_records')
          .select('value')
          .where('key', '=', key)
          .executeTakeFirst(),
      'read a prompt record',
    );
    if (row === undefined) return undefined;
    try {
      return JSON.parse(row.value) as unknown;
    } catch (error) {
      throw PromptStoreError.unavailable(`stored prompt record ${key} is not JSON`, { cause: error });
    }
  }

  async put(key: string, value: unknown): Promise<void> {
    const text = JSON.stringify(value);
    await this.#step(
      () =>
        this.#trx
          .insertInto('factum_prompt_records')
          .values({ key, value: text })
          .onConflict((conflict) => conflict.column('key').doUpdateSet({ value: text }))
          .execute(),
      'write a prompt record',
    );
    this.#writes.push({ op: 'put', key, value: JSON.parse(text) as unknown });
  }

  async delete(key: string): Promise<void> {
    await this.#step(
      () => this.#trx.deleteFrom('factum_prompt_records').where('key', '=', key).execute(),
      'delete a prompt record',
    );
    this.#writes.push({ op: 'delete', key });
  }

  async commit(): Promise<CommitReceipt> {
    const receipt = { transactionId: this.id, digest: digestWrites(this.#writes) };
    const now = this.#traits.now();
    await this.#step(async () => {
      // The receipt row commits atomically with the writes: if it is visible, they are.
      await this.#trx
        .insertInto('factum_prompt_receipts')
        .values({ transaction_id: receipt.transactionId, digest: receipt.digest, committed_at: now })
        .execute();
      await this.#trx
        .deleteFrom('factum_prompt_receipts')
        .where('committed_at', '<', now - this.#traits.receiptRetentionMs)
        .execute();
    }, 'write a commit receipt');
    await this.#step(() => this.#trx.commit().execute(), 'commit');
    return receipt;
  }

  async rollback(): Promise<void> {
    if (this.#trx.isCommitted || this.#trx.isRolledBack) return;
    await this.#step(() => this.#trx.rollback().execute(), 'roll back');
  }
}
