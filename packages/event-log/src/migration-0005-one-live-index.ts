import type { Kysely, Migration } from 'kysely';

/**
 * Drops `invocations_unfinished`. It indexed the same rows as
 * `one_live_invocation_per_session`: an invocation is live from its opening to its end,
 * and `live` and `ended_sequence` change in the same statement. Yet each index was
 * written at every opening and every end, two of a sequential one-tool turn's 35 WAL
 * frames on SQLite. The unfinished invocations are now read through the live index.
 */
export const oneLiveIndexMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.dropIndex('invocations_unfinished').ifExists().execute();
  },
};
