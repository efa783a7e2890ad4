import Database from 'better-sqlite3';
import pg from 'pg';
import type { LogTarget } from '../../src/index.ts';

/**
 * The schema of a log as its store describes it — tables, columns, indexes — and the
 * migrations recorded as applied, as one comparable value.
 */
export async function schemaSnapshot(target: LogTarget): Promise<{ schema: string[]; applied: string[] }> {
  if (typeof target === 'string') {
    const database = new Database(target, { readonly: true });
    try {
      const schema = database
        .prepare(
          "select type || ' ' || name || ' ' || coalesce(sql, '') as line from sqlite_master order by name",
        )
        .pluck()
        .all() as string[];
      const applied = database
        .prepare('select name from kysely_migration order by name')
        .pluck()
        .all() as string[];
      return { schema, applied };
    } finally {
      database.close();
    }
  }
  const client = new pg.Client({ connectionString: target.postgres });
  await client.connect();
  try {
    const columns = await client.query<{ line: string }>(
      `select table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable as line
         from information_schema.columns where table_schema = 'public' order by 1`,
    );
    const indexes = await client.query<{ line: string }>(
      `select indexdef as line from pg_indexes where schemaname = 'public' order by 1`,
    );
    const applied = await client.query<{ name: string }>('select name from kysely_migration order by name');
    return {
      schema: [...columns.rows, ...indexes.rows].map((row) => row.line),
      applied: applied.rows.map((row) => row.name),
    };
  } finally {
    await client.end();
  }
}
