import { Kysely, PostgresDialect } from 'kysely';
import { KyselyPromptStore, type PromptTables } from './kysely-prompt-store.js';
import type { PromptStore } from './prompt-store.js';

/** Options of `openPostgresPromptStore`. */
export type PostgresPromptStoreOptions = {
  /** A `postgres://` connection string. */
  readonly connectionString: string;
  /** Most pooled connections (default 4). */
  readonly maxConnections?: number;
  /** How long commit receipts stay readable (default one day). */
  readonly receiptRetentionMs?: number;
  readonly signal?: AbortSignal;
};

// serialization_failure, deadlock_detected, unique_violation: definitely not applied.
const conflictCodes = new Set(['40001', '40P01', '23505']);

/**
 * Opens a prompt store on PostgreSQL, for several hosts sharing one conversation
 * state. Transactions run SERIALIZABLE so that concurrent writers conflict instead of
 * overwriting each other.
 */
export async function openPostgresPromptStore(options: PostgresPromptStoreOptions): Promise<PromptStore> {
  options.signal?.throwIfAborted();
  // Loaded on first use: an embedded (SQLite) conversation never loads the PostgreSQL driver.
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: options.connectionString, max: options.maxConnections ?? 4 });
  const db = new Kysely<PromptTables>({ dialect: new PostgresDialect({ pool }) });
  try {
    return await KyselyPromptStore.create(db, {
      isConflict: (error) => conflictCodes.has(String((error as { code?: unknown } | null)?.code)),
      isolation: 'serializable',
      receiptRetentionMs: options.receiptRetentionMs ?? 86_400_000,
      now: Date.now,
    });
  } catch (error) {
    await db.destroy();
    throw error;
  }
}
