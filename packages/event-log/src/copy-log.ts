import { type Kysely, sql } from 'kysely';
import { EventLogError } from './event-log-error.js';
import { chainLock } from './log-dialect.js';
import type { LogDatabase } from './log-schema.js';
import type { ChainAnchor, ChainReport } from './verify-chain.js';

/**
 * The tables a copy carries, each read in its key's order (events first, by sequence),
 * a page at a time: pages of small rows are long, and pages of rows that may be large
 * (an event up to `maxEventBytes`, a stored result up to `maxResultBytes`) short, so a
 * page stays within some hundreds of megabytes however large its rows.
 */
const tables = {
  events: { key: ['sequence'], page: 256 },
  tool_results: { key: ['event_id'], page: 8 },
  invocations: { key: ['session_id', 'invocation_id'], page: 1000 },
  operations: { key: ['session_id', 'operation_id'], page: 1000 },
  sessions: { key: ['session_id'], page: 1000 },
  hosts: { key: ['host_id'], page: 1000 },
} as const satisfies { [T in keyof LogDatabase]: { key: readonly string[]; page: number } };

export type CopiedTable = keyof typeof tables;

/** How many rows of each table a copy wrote. */
export type CopiedRows = { readonly [T in CopiedTable]: number };

/**
 * What `EventLog.copy` did: the rows it wrote; `head`, the source's last event as the
 * copy read it (its stored chain digest), undefined for an empty log; and the copy's own
 * check — its chains recomputed from the copied bytes, through `head`.
 */
export type CopyReport = {
  readonly rows: CopiedRows;
  readonly head: ChainAnchor | undefined;
  readonly report: ChainReport;
};

/** How far a copy has come: the rows of `table` written so far (after each page). */
export type CopyProgress = { readonly table: CopiedTable; readonly rows: number };

/** What `EventLog.copy` takes besides its two logs. */
export type CopyOptions = {
  /** Told after each page the copy writes, for a progress display. */
  readonly onProgress?: (progress: CopyProgress) => void;
};

type Row = Record<string, unknown>;

/**
 * Reads every row of `table` in its key's order, `pageRows` at a time, inside the
 * source's snapshot (the log's PostgreSQL connections read `bigint` as numbers, as
 * SQLite gives them).
 */
async function* tableRows(
  source: Kysely<LogDatabase>,
  table: CopiedTable,
  pageRows: number,
): AsyncGenerator<Row[]> {
  const { key } = tables[table];
  let after: unknown[] | undefined;
  for (;;) {
    const bound = after;
    const page = (await source
      .selectFrom(table)
      .selectAll()
      .$if(bound !== undefined, (query) =>
        query.where(({ eb, refTuple, tuple }) =>
          key.length === 1
            ? eb(sql.ref(key[0]!), '>', bound![0])
            : eb(refTuple(sql.ref(key[0]!), sql.ref(key[1]!)), '>', tuple(bound![0], bound![1])),
        ),
      )
      .orderBy(sql.ref(key[0]!))
      .$if(key.length > 1, (query) => query.orderBy(sql.ref(key[1]!)))
      .limit(pageRows)
      .execute()) as Row[];
    if (page.length === 0) return;
    yield page;
    const last = page.at(-1)!;
    after = key.map((column) => last[column]);
  }
}

/**
 * Copies every row of `source` into `target`, whose tables must all be empty, inside one
 * transaction of each: a consistent snapshot of the source, and a target that shows the
 * whole copy or none of it. Rows go over as they are stored — sequences, bodies and both
 * chains' digests — so the copy verifies with the source's anchors. The target's
 * transaction is its only writer from its first statement: `begin immediate` on SQLite,
 * the chain's advisory lock on PostgreSQL.
 */
export async function copyRows(
  source: Kysely<LogDatabase>,
  target: Kysely<LogDatabase>,
  options: {
    readonly sourceDialect: 'sqlite' | 'postgres';
    readonly targetDialect: 'sqlite' | 'postgres';
    /** Rows read from the source at a time, instead of each table's own page. */
    readonly pageRows?: number;
  } & CopyOptions,
): Promise<{ readonly rows: CopiedRows; readonly head: ChainAnchor | undefined }> {
  // One snapshot of the source: a SQLite read transaction sees one state of the WAL.
  const snapshot =
    options.sourceDialect === 'postgres'
      ? source.transaction().setIsolationLevel('repeatable read')
      : source.transaction();
  return snapshot.execute((reader) =>
    target.connection().execute(async (writer) => {
      await sql.raw(options.targetDialect === 'sqlite' ? 'begin immediate' : 'begin').execute(writer);
      try {
        if (options.targetDialect === 'postgres')
          await sql`select pg_advisory_xact_lock(${sql.lit(chainLock)})`.execute(writer);
        await refuseUnlessEmpty(writer);
        const counts = { events: 0, tool_results: 0, invocations: 0, operations: 0, sessions: 0, hosts: 0 };
        let head: ChainAnchor | undefined;
        for (const table of Object.keys(tables) as CopiedTable[]) {
          for await (const page of tableRows(reader, table, options.pageRows ?? tables[table].page)) {
            // A statement binds at most 32,766 values on SQLite and 65,535 on PostgreSQL.
            const perInsert = Math.max(1, Math.floor(30_000 / Object.keys(page[0]!).length));
            for (let start = 0; start < page.length; start += perInsert) {
              await writer
                .insertInto(table)
                .values(page.slice(start, start + perInsert) as never)
                .execute();
            }
            counts[table] += page.length;
            options.onProgress?.({ table, rows: counts[table] });
            const last = page.at(-1)!;
            if (table === 'events') head = { sequence: last.sequence as number, digest: String(last.digest) };
          }
        }
        await sql`commit`.execute(writer);
        return { rows: counts, head };
      } catch (error) {
        await sql`rollback`.execute(writer).catch(() => undefined);
        throw error;
      }
    }),
  );
}

async function refuseUnlessEmpty(db: Kysely<LogDatabase>): Promise<void> {
  for (const table of Object.keys(tables) as CopiedTable[]) {
    const row = await db.selectFrom(table).select(sql<number>`1`.as('one')).limit(1).executeTakeFirst();
    if (row !== undefined)
      throw new EventLogError(
        'target_not_empty',
        `the copy's target already holds rows (its ${table} table is not empty): a log is copied only into a new one`,
      );
  }
}
