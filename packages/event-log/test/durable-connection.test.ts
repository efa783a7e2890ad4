import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompiledQuery } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { EventLog } from '../src/index.ts';
import { connectSqlite } from '../src/sqlite-connection.ts';

const FULL = 2;
const synchronous = CompiledQuery.raw('pragma synchronous');

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
    await first.db.destroy();

    // Through the log (migrations ran, the file is in WAL mode), then a fresh connection.
    const log = await EventLog.open(path);
    await log.close();
    const again = connectSqlite(path);
    // A read first: SQLite applies its WAL default when a connection first opens the WAL.
    again.direct(CompiledQuery.raw('select count(*) as n from events'));
    expect(again.direct(synchronous)).toEqual([{ synchronous: FULL }]);
    expect(again.direct(CompiledQuery.raw('pragma journal_mode'))).toEqual([{ journal_mode: 'wal' }]);
    await again.db.destroy();
  });
});
