import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompiledQuery, sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { EventLog } from '../src/index.ts';
import { openPostgres } from '../src/open-postgres.ts';
import { connectSqlite } from '../src/sqlite-connection.ts';
import { testStores } from '../src/testing.ts';
import { facts, invocation, write } from './support/facts.ts';

const FULL = 2;
const synchronous = CompiledQuery.raw('pragma synchronous');
// SQLite's default is off; on macOS only F_FULLFSYNC gets the WAL past the drive's cache.
const fullfsync = CompiledQuery.raw('pragma fullfsync');

let dir = '';
afterEach(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
  dir = '';
});

// better-sqlite3 is built with SQLITE_DEFAULT_WAL_SYNCHRONOUS=1: a connection that does
// not say otherwise drops to NORMAL in WAL mode, and its commits stop waiting for the
// WAL's fsync. Every connection of a log (the log's own and its writer thread's are made
// by `connectSqlite`) must say FULL, on a new file and on one already in WAL mode.
describe('a SQLite log connection', () => {
  it('commits with synchronous=FULL in WAL mode, on a new file and when reopened', async () => {
    dir = mkdtempSync(join(tmpdir(), 'factum-durable-'));
    const path = join(dir, 'log.sqlite');
    const first = connectSqlite(path);
    expect(first.wal).toBe(true);
    expect(first.direct(synchronous)).toEqual([{ synchronous: FULL }]);
    expect(first.direct(fullfsync)).toEqual([{ fullfsync: 1 }]);
    await first.db.destroy();

    // Through the log (migrations ran, the file is in WAL mode), then a fresh connection.
    const log = await EventLog.open(path);
    await log.close();
    const again = connectSqlite(path);
    // A read first: SQLite applies its WAL default when a connection first opens the WAL.
    again.direct(CompiledQuery.raw('select count(*) as n from events'));
    expect(again.direct(synchronous)).toEqual([{ synchronous: FULL }]);
    expect(again.direct(fullfsync)).toEqual([{ fullfsync: 1 }]);
    expect(again.direct(CompiledQuery.raw('pragma journal_mode'))).toEqual([{ journal_mode: 'wal' }]);
    await again.db.destroy();
  });
});

const postgres = testStores().find((stores) => stores.name === 'postgres')!;

async function settingOf(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(`select current_setting('synchronous_commit') as value`)).rows[0].value;
  } finally {
    await client.end();
  }
}

describe('a PostgreSQL log', () => {
  it('asks for synchronous_commit=on where the database turned it off, and leaves other values alone', async () => {
    await using store = await postgres.create();
    const url = (store.target as { postgres: string }).postgres;
    await store.raw(
      `do $$ begin execute format('alter database %I set synchronous_commit = off', current_database()); end $$`,
    );
    expect(await settingOf(url), 'a plain connection acknowledges before the flush').toBe('off');
    const opened = await openPostgres(url);
    const setting = sql<{ value: string }>`select current_setting('synchronous_commit') as value`;
    expect((await setting.execute(opened.db)).rows).toEqual([{ value: 'on' }]);
    await opened.db.destroy();
    // The log commits through such connections.
    const log = await EventLog.open(store.target);
    await log.append(write(invocation(), facts.opened()));
    expect(log.stats().commits).toBe(1);
    await log.close();

    // A stronger setting (or `local`, which still waits for the local flush) stands.
    await store.raw(
      `do $$ begin execute format('alter database %I set synchronous_commit = local', current_database()); end $$`,
    );
    const local = await openPostgres(url);
    expect((await setting.execute(local.db)).rows).toEqual([{ value: 'local' }]);
    await local.db.destroy();
  });
});
