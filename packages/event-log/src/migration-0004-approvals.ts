import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Approvals. An operation that asks for a person's approval gets its `operations` row at
 * the request, in state `requested`, with the call's tool, input digest and deadline;
 * its decision and the sequences of both facts are written beside them. The row's key
 * still makes every operation id unique in its session; the decision is set only where
 * none is (`decision is null`), so a second decision changes nothing even past the rules.
 * Two partial indexes hold approval rows only: the requested ones across sessions (what
 * waits for a person or for a continuation), and a parked invocation's.
 */
export const approvalsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    const columns = [
      ['approval_invocation_id', 'text'],
      ['tool_name', 'text'],
      ['input_digest', 'text'],
      ['expires_at', 'bigint'],
      ['decision', 'text'],
      ['requested_sequence', 'bigint'],
      ['decided_sequence', 'bigint'],
    ] as const;
    for (const [name, type] of columns) {
      await db.schema.alterTable('operations').addColumn(name, type).execute();
    }
    await db.schema
      .createIndex('operations_requested')
      .on('operations')
      .column('requested_sequence')
      .where(sql.ref('state'), '=', sql.lit('requested'))
      .execute();
    await db.schema
      .createIndex('operations_by_approval_invocation')
      .on('operations')
      .columns(['session_id', 'approval_invocation_id'])
      .where(sql.ref('approval_invocation_id'), 'is not', null)
      .execute();
  },
};
