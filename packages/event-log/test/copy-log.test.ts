import type { Invocation } from '@factum/agent-facts';
import Database from 'better-sqlite3';
import type { KyselyPlugin } from 'kysely';
import { describe, expect, it } from 'vitest';
import { copyRows } from '../src/copy-log.ts';
import { type CopyProgress, EventLog, EventLogError } from '../src/index.ts';
import { connectSqlite } from '../src/sqlite-connection.ts';
import { type TestStoreFactory, testStores } from '../src/testing.ts';
import { bounds, facts, invocation, temporaryDirectory, write } from './support/facts.ts';
import { recordedRows, recordSessions } from './support/sessions.ts';

const stores = testStores();
const pairs = stores.flatMap((from) =>
  stores.map((to) => ({ name: `${from.name} to ${to.name}`, from, to })),
);

/** What a reader of each log sees of it: histories, approvals, unfinished runs, results. */
async function viewOf(log: EventLog, at: { done: Invocation; parked: Invocation; live: Invocation }) {
  const sessions = [at.done, at.parked, at.live].map((each) => each.sessionId);
  const histories = await Promise.all(sessions.map((session) => log.scopedPrefix({ session }, bounds)));
  const settledEvent = histories[0]!.events.find((event) => event.event.fact.kind === 'tool_settled')!;
  return {
    histories: histories.map((prefix) => ({ events: prefix.events, digest: prefix.digest })),
    approvals: await log.pendingApprovals(),
    unfinished: await log.unfinishedOwnership(),
    result: (await log.resolveToolResult(at.done.sessionId, settledEvent.event.id)).json(),
  };
}

describe.each(pairs)('copying a log, $name', ({ from, to }) => {
  it('carries every row as stored: the copy verifies through the source’s head, and its rules go on', async () => {
    await using source = await from.create();
    await using target = await to.create();
    await using log = await EventLog.open(source.target);
    await log.holdLease();
    const at = await recordSessions(log);
    const before = await log.verifyChain();
    const seen = await viewOf(log, at);

    const progress: CopyProgress[] = [];
    const { rows, head, report } = await EventLog.copy(source.target, target.target, {
      onProgress: (step) => progress.push(step),
    });

    // Told page by page, events first, each table's last count its whole.
    expect(progress[0]?.table).toBe('events');
    expect(new Map(progress.map((step) => [step.table, step.rows]))).toEqual(new Map(Object.entries(rows)));
    expect(head).toEqual(before.head);
    expect(rows).toEqual(recordedRows);
    expect(report).toEqual({ ok: true, events: 11, head: before.head });
    await using copy = await EventLog.open(target.target);
    expect(await copy.verifyChain({ anchors: [before.head!] })).toMatchObject({ ok: true, events: 11 });
    expect(await viewOf(copy, at)).toEqual(seen);
    // The rules' tables came along: the live run still holds its session, and the
    // parked call still waits for its decision.
    await expect(
      copy.append(write(invocation('-other', 'running'), facts.opened('again'))),
    ).rejects.toMatchObject({
      code: 'session_busy',
    });
    const next = invocation('-next', 'finished');
    const opened = await copy.append(write(next, facts.opened('after the move')));
    expect(opened.sequence).toBe(12);
    expect(await copy.verifyChain({ anchors: [before.head!] })).toMatchObject({ ok: true, events: 12 });
  });

  it('refuses a target that holds rows, and writes nothing to it', async () => {
    await using source = await from.create();
    await using target = await to.create();
    {
      await using log = await EventLog.open(source.target);
      await recordSessions(log);
    }
    {
      await using other = await EventLog.open(target.target);
      await other.append(write(invocation('-mine', 'mine'), facts.opened('already here')));
    }
    const copying = EventLog.copy(source.target, target.target);
    await expect(copying).rejects.toBeInstanceOf(EventLogError);
    await expect(copying).rejects.toMatchObject({ code: 'target_not_empty' });
    await using kept = await EventLog.open(target.target);
    expect(await kept.verifyChain()).toMatchObject({ ok: true, events: 1 });
    expect(await kept.unfinishedInvocations()).toEqual([invocation('-mine', 'mine')]);
  });
});

describe.each(stores)('copying an empty log, $name', (factory: TestStoreFactory) => {
  it('copies nothing and reports no head', async () => {
    await using source = await factory.create();
    await using target = await factory.create();
    await (await EventLog.open(source.target)).close();
    const { rows, head, report } = await EventLog.copy(source.target, target.target);
    expect(Object.values(rows).every((count) => count === 0)).toBe(true);
    expect(head).toBeUndefined();
    expect(report).toEqual({ ok: true, events: 0, head: undefined });
  });
});

describe('copying a SQLite log that another process writes meanwhile', () => {
  it('copies one snapshot: no table holds a row whose facts the copy lacks', async () => {
    using directory = temporaryDirectory();
    using targetDirectory = temporaryDirectory();
    {
      await using log = await EventLog.open(directory.file);
      await recordSessions(log);
    }
    // Another connection commits a run just as the copy reaches the invocations table,
    // after it read the events.
    const other = new Database(directory.file);
    const midway: KyselyPlugin = {
      transformQuery(args) {
        if (JSON.stringify(args.node).includes('"name":"invocations"') && other.open) {
          other
            .prepare(
              `insert into invocations (session_id, invocation_id, turn_id, run_id, opened_sequence, live) values ('late', 'i', 't', 'r', 12, 1)`,
            )
            .run();
          other.close();
        }
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const source = connectSqlite(directory.file);
    await using target = await EventLog.open(targetDirectory.file);
    await target.close();
    const into = connectSqlite(targetDirectory.file);
    try {
      // Two rows a page: every table of more than two rows is read in several.
      const { rows } = await copyRows(source.db.withPlugin(midway), into.db, {
        sourceDialect: 'sqlite',
        targetDialect: 'sqlite',
        pageRows: 2,
      });
      expect(other.open).toBe(false);
      expect(rows).toMatchObject({ events: 11, invocations: 3 });
    } finally {
      await source.db.destroy();
      await into.db.destroy();
    }
    await using copy = await EventLog.open(targetDirectory.file);
    expect(await copy.verifyChain()).toMatchObject({ ok: true, events: 11 });
    expect((await copy.unfinishedInvocations()).map((each) => each.sessionId)).not.toContain('late');
    await using reopened = await EventLog.open(directory.file);
    expect((await reopened.unfinishedInvocations()).map((each) => each.sessionId)).toContain('late');
  });
});

describe('a copy that fails midway', () => {
  it('leaves the target empty: the copy is one transaction', async () => {
    using directory = temporaryDirectory();
    using targetDirectory = temporaryDirectory();
    {
      await using log = await EventLog.open(directory.file);
      await log.holdLease();
      await recordSessions(log);
    }
    // The source fails on the last table, after every other was written to the target.
    const failing: KyselyPlugin = {
      transformQuery(args) {
        if (JSON.stringify(args.node).includes('"name":"hosts"')) throw new Error('the source went away');
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    await (await EventLog.open(targetDirectory.file)).close();
    const source = connectSqlite(directory.file);
    const into = connectSqlite(targetDirectory.file);
    try {
      const dialects = { sourceDialect: 'sqlite', targetDialect: 'sqlite', pageRows: 2 } as const;
      await expect(copyRows(source.db.withPlugin(failing), into.db, dialects)).rejects.toThrow(
        'the source went away',
      );
      // Nothing of it is in the target, which a second copy then fills.
      const { rows } = await copyRows(source.db, into.db, dialects);
      expect(rows).toEqual(recordedRows);
    } finally {
      await source.db.destroy();
      await into.db.destroy();
    }
  });
});

describe('what a copy carries', () => {
  it('is every table of the log’s schema, and a source that is not there is refused', async () => {
    using directory = temporaryDirectory();
    using targetDirectory = temporaryDirectory();
    await expect(EventLog.copy(directory.file, targetDirectory.file)).rejects.toMatchObject({
      code: 'open_failed',
    });
    await (await EventLog.open(directory.file)).close();
    const { rows } = await EventLog.copy(directory.file, targetDirectory.file);
    // A table a later migration adds fails here until the copy carries it.
    const schema = new Database(targetDirectory.file, { readonly: true });
    const names = schema
      .prepare(
        `select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like 'kysely_%'`,
      )
      .all() as { name: string }[];
    schema.close();
    expect(Object.keys(rows).sort()).toEqual(names.map((row) => row.name).sort());
  });
});
