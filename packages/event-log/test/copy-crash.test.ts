import { beforeAll, describe, expect, it } from 'vitest';
import { EventLog } from '../src/index.ts';
import { openPostgres } from '../src/open-postgres.ts';
import { connectSqlite } from '../src/sqlite-connection.ts';
import { testStores } from '../src/testing.ts';
import { bundleChild, startChild } from './support/child-bundle.ts';
import { temporaryDirectory } from './support/facts.ts';
import { recordedRows, recordSessions } from './support/sessions.ts';

let copyChild = '';
beforeAll(async () => {
  copyChild = await bundleChild(new URL('./support/copy-child.ts', import.meta.url), 'copy-child');
}, 60_000);

describe.each(testStores())('a copy into $name killed halfway', (stores) => {
  it('leaves the target empty, seen so by another process meanwhile, and a second copy completes it', async () => {
    using directory = temporaryDirectory();
    await using target = await stores.create();
    let head: Awaited<ReturnType<EventLog['verifyChain']>>['head'];
    {
      await using log = await EventLog.open(directory.file);
      await log.holdLease();
      await recordSessions(log);
      head = (await log.verifyChain()).head;
    }
    const text = typeof target.target === 'string' ? target.target : JSON.stringify(target.target);
    const child = startChild(copyChild, [directory.file, text, '4']);
    const half = new Promise<void>((resolve) => {
      child.process.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('half')) resolve();
      });
    });
    await Promise.race([half, child.done.then((end) => Promise.reject(new Error(end.output)))]);
    // Four inserts of the copy are in the target's open transaction: another process
    // sees none of them. (It reads the store raw: opening the log checks the schema under
    // the write lock, which the copy holds.)
    const reader =
      typeof target.target === 'string'
        ? connectSqlite(target.target).db
        : (await openPostgres(target.target.postgres)).db;
    try {
      for (const table of ['events', 'invocations', 'operations', 'hosts'] as const) {
        const { count } = await reader
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .executeTakeFirstOrThrow();
        expect(Number(count)).toBe(0);
      }
    } finally {
      await reader.destroy();
    }
    child.process.kill('SIGKILL');
    const end = await child.done;
    expect(end.signal).toBe('SIGKILL');
    expect(end.output).not.toContain('copied');

    const { rows, report } = await EventLog.copy(directory.file, target.target);
    expect(rows).toEqual(recordedRows);
    expect(report).toEqual({ ok: true, events: 11, head });
  });
});
