import { contentDigest, ToolResult } from '@factum/agent-facts';
import type { Kysely } from 'kysely';
import { EventLogError } from './event-log-error.js';
import type { LogDatabase } from './log-schema.js';

/** Ids per statement when results are read together: well under every store's parameter limit. */
const IDS_PER_STATEMENT = 500;

/** The stored result a `tool_settled` (or `tool_reconciled`) event points at. */
export async function readToolResult(
  db: Kysely<LogDatabase>,
  sessionId: string,
  eventId: string,
): Promise<ToolResult> {
  const row = await db
    .selectFrom('tool_results')
    .select(['digest', 'body'])
    .where('event_id', '=', eventId)
    .where('session_id', '=', sessionId)
    .executeTakeFirst();
  if (row === undefined) {
    throw new EventLogError(
      'result_missing',
      `no tool result is stored for event ${eventId} of session ${sessionId}`,
    );
  }
  return checked(eventId, row);
}

/**
 * The stored results of many events of one session, by event id, read a few hundred
 * per statement; an id with no stored result is left out.
 */
export async function readToolResults(
  db: Kysely<LogDatabase>,
  sessionId: string,
  eventIds: readonly string[],
): Promise<Map<string, ToolResult>> {
  const results = new Map<string, ToolResult>();
  for (let start = 0; start < eventIds.length; start += IDS_PER_STATEMENT) {
    const rows = await db
      .selectFrom('tool_results')
      .select(['event_id', 'digest', 'body'])
      .where('session_id', '=', sessionId)
      .where('event_id', 'in', eventIds.slice(start, start + IDS_PER_STATEMENT))
      .execute();
    for (const row of rows) results.set(row.event_id, checked(row.event_id, row));
  }
  return results;
}

/** A stored result, once its bytes match the digest stored beside them. */
function checked(eventId: string, row: { readonly digest: string; readonly body: string }): ToolResult {
  if (contentDigest(row.body) !== row.digest) {
    throw new EventLogError('corrupt_row', `the stored result of event ${eventId} does not match its digest`);
  }
  return ToolResult.fromText(row.body);
}
