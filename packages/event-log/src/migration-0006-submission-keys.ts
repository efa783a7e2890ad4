import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Submission keys. An invocation's opening may carry its submitter's key
 * (`invocation_opened.idempotencyKey`); the invocation row keeps it, and a partial
 * unique index makes it unique in its session, so a second opening with the same key
 * fails at the store even past the rules. Existing rows get none: older logs open
 * unchanged, and their invocations had no key.
 */
export const submissionKeysMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('invocations').addColumn('idempotency_key', 'text').execute();
    await db.schema
      .createIndex('invocations_by_submission')
      .on('invocations')
      .columns(['session_id', 'idempotency_key'])
      .unique()
      .where(sql.ref('idempotency_key'), 'is not', null)
      .execute();
  },
};
