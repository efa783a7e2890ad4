import type { CompiledQuery, Kysely } from 'kysely';
import type { RuleEffects } from './append-rules.js';
import { run, type Statements } from './log-dialect.js';
import type { EventsTable, LogDatabase } from './log-schema.js';
import type { StagedWrite } from './staged-write.js';

/** A write the rules accepted, with the row it becomes. */
export type AcceptedWrite = { staged: StagedWrite; row: EventsTable; effects: RuleEffects };

const eventColumns = [
  'sequence',
  'event_id',
  'session_id',
  'invocation_id',
  'run_id',
  'kind',
  'operation_id',
  'body',
  'bytes',
  'digest',
  'session_digest',
] as const satisfies readonly (keyof EventsTable)[];

const templates = new WeakMap<object, Map<number, CompiledQuery>>();

/**
 * The events insert for `rows` rows, built by Kysely once per dialect and row count
 * and reused with new parameters: compiling the query (and minting its query id) costs
 * more than SQLite spends running it. Keyed by the dialect's adapter, which every
 * connection-bound `Kysely` of one database shares (the handle itself is new per batch).
 */
function insertTemplate(db: Kysely<LogDatabase>, rows: number): CompiledQuery {
  const adapter = db.getExecutor().adapter;
  let byCount = templates.get(adapter);
  if (byCount === undefined) {
    byCount = new Map();
    templates.set(adapter, byCount);
  }
  let template = byCount.get(rows);
  if (template === undefined) {
    const row = Object.fromEntries(eventColumns.map((column) => [column, null])) as unknown as EventsTable;
    template = db
      .insertInto('events')
      .values(Array.from({ length: rows }, () => row))
      .compile();
    byCount.set(rows, template);
  }
  return template;
}

/** The insert of one event row (a lone write's only statement). */
export function eventInsert(builder: Kysely<LogDatabase>, row: EventsTable): CompiledQuery {
  return { ...insertTemplate(builder, 1), parameters: eventColumns.map((column) => row[column]) };
}

/**
 * Inserts the accepted rows in sequence order, `rowsPerInsert` at a time, then their
 * out-of-line tool results. On SQLite one prepared single-row insert per event is
 * faster than one multi-row `VALUES` (measured: ≈24 against ≈42 µs per row with the
 * log's indexes); a networked store wants many rows per round trip.
 */
export function* insertEvents(
  builder: Kysely<LogDatabase>,
  accepted: readonly AcceptedWrite[],
  rowsPerInsert: number,
): Statements<void> {
  for (let start = 0; start < accepted.length; start += rowsPerInsert) {
    const end = Math.min(accepted.length, start + rowsPerInsert);
    const parameters: unknown[] = [];
    for (let index = start; index < end; index += 1) {
      const row = accepted[index]!.row;
      for (const column of eventColumns) parameters.push(row[column]);
    }
    yield* run({ ...insertTemplate(builder, end - start), parameters });
  }
  const results = accepted.filter((entry) => entry.staged.result !== undefined);
  if (results.length === 0) return;
  const parameters: unknown[] = [];
  for (const { staged, row } of results) {
    parameters.push(row.event_id, row.session_id, staged.result!.digest, staged.result!.text);
  }
  yield* run({ ...resultInsertTemplate(builder, results.length), parameters });
}

const resultColumns = ['event_id', 'session_id', 'digest', 'body'] as const;
const resultTemplates = new WeakMap<object, Map<number, CompiledQuery>>();

/** The tool results insert for `rows` rows, compiled once per dialect and row count. */
function resultInsertTemplate(db: Kysely<LogDatabase>, rows: number): CompiledQuery {
  const adapter = db.getExecutor().adapter;
  let byCount = resultTemplates.get(adapter);
  if (byCount === undefined) {
    byCount = new Map();
    resultTemplates.set(adapter, byCount);
  }
  let template = byCount.get(rows);
  if (template === undefined) {
    const row = Object.fromEntries(resultColumns.map((column) => [column, ''])) as {
      [column in (typeof resultColumns)[number]]: string;
    };
    template = db
      .insertInto('tool_results')
      .values(Array.from({ length: rows }, () => row))
      .compile();
    byCount.set(rows, template);
  }
  return template;
}
