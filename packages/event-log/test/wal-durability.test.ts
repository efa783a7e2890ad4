import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../src/index.ts';
import { openSqlite } from '../src/open-database.ts';
import { WalDurability } from '../src/wal-durability.ts';
import { bounds, facts, invocation, temporaryDirectory, write } from './support/facts.ts';

describe('WAL durability', () => {
  it('after one failed WAL sync every later batch fails, since nothing after it can be proven durable', async () => {
    using dir = temporaryDirectory();
    const { db } = openSqlite(dir.file);
    const durability = new WalDurability(join(dir.path, 'missing.sqlite'));
    try {
      await durability.prepare(db, true);
      const first = await durability.settle().catch((error: unknown) => error);
      expect((first as Error).message).toContain('cannot sync the write-ahead log');
      await expect(durability.prepare(db, false)).rejects.toBe(first);
      await expect(durability.settle()).rejects.toBe(first);
    } finally {
      durability.close();
      await db.destroy();
    }
  });

  it('batches synced off the event loop and lone writes synced in COMMIT interleave into one verified chain', async () => {
    using dir = temporaryDirectory();
    const log = await EventLog.open(dir.file);
    for (let round = 0; round < 3; round += 1) {
      const group = Array.from({ length: 16 }, (_, index) => invocation(`-${round}-${index}`, `s-${index}`));
      await Promise.all(group.map((at) => log.append(write(at, facts.opened()))));
      await log.append(write(invocation(`-lone-${round}`, `lone-${round}`), facts.opened()));
      await Promise.all(group.map((at) => log.append(write(at, facts.ended()))));
    }
    await log.close();
    const reopened = await EventLog.open(dir.file);
    expect((await reopened.prefix(bounds)).highWater).toBe(99);
    expect(await reopened.verifyChain()).toEqual({ ok: true, events: 99 });
    await reopened.close();
  });
});
