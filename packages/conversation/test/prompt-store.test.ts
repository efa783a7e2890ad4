import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  digestWrites,
  openPostgresPromptStore,
  openSqlitePromptStore,
  type PromptStore,
  PromptStoreError,
} from '../src/index.js';
import { connectDurably } from '../src/sqlite-prompt-store.js';

type Target = {
  readonly name: string;
  readonly open: () => Promise<{ stores: [PromptStore, PromptStore]; dispose: () => Promise<void> }>;
};

const sqlite: Target = {
  name: 'sqlite',
  async open() {
    const dir = mkdtempSync(join(tmpdir(), 'factum-prompt-store-'));
    const path = join(dir, 'prompts.sqlite');
    // Two connections to one file, without waiting for locks: contention is a conflict.
    const stores: [PromptStore, PromptStore] = [
      await openSqlitePromptStore(path, { busyTimeoutMs: 0 }),
      await openSqlitePromptStore(path, { busyTimeoutMs: 0 }),
    ];
    return {
      stores,
      dispose: async () => {
        await Promise.all(stores.map((store) => store.close()));
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

const postgres: Target = {
  name: 'postgres',
  async open() {
    // The package's vitest setup starts an embedded PostgreSQL when none is named.
    const url = process.env.FACTUM_TEST_POSTGRES_URL;
    if (!url)
      throw new Error('FACTUM_TEST_POSTGRES_URL is not set: run this suite through its vitest config');
    const first = await openPostgresPromptStore({ connectionString: url });
    const second = await openPostgresPromptStore({ connectionString: url });
    return {
      stores: [first, second],
      dispose: async () => {
        await first.close();
        await second.close();
      },
    };
  },
};

const record = (id: string) => ({ message_id: id, request_part_id: `prt_${id}`, waiter: 'waiting' });
let disposers: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const dispose of disposers) await dispose();
  disposers = [];
});

async function open(target: Target) {
  const opened = await target.open();
  disposers.push(opened.dispose);
  return opened.stores;
}

for (const target of [sqlite, postgres]) {
  describe(`prompt store over ${target.name}`, () => {
    it('a commit leaves a receipt with the digest of its writes, and the writes', async () => {
      const [store] = await open(target);
      const key = `k-${crypto.randomUUID()}`;
      const tx = await store.begin({ purpose: 'admission' });
      expect(await tx.read(key)).toBeUndefined();
      await tx.put(key, record('a'));
      const receipt = await tx.commit();
      expect(receipt).toEqual({
        transactionId: tx.id,
        digest: digestWrites([{ op: 'put', key, value: record('a') }]),
      });
      await tx.rollback(); // after commit: nothing to do, and no error
      expect(await store.readReceipt(tx.id)).toEqual(receipt);
      const check = await store.begin({ purpose: 'inspection' });
      expect(await check.read(key)).toEqual(record('a'));
      await check.rollback();
    });

    it('a rollback leaves neither writes nor a receipt', async () => {
      const [store] = await open(target);
      const key = `k-${crypto.randomUUID()}`;
      const tx = await store.begin({ purpose: 'abort_reconciliation' });
      await tx.put(key, record('b'));
      await tx.delete(key);
      await tx.put(key, record('c'));
      await tx.rollback();
      expect(await store.readReceipt(tx.id)).toBeUndefined();
      const check = await store.begin({ purpose: 'inspection' });
      expect(await check.read(key)).toBeUndefined();
      await check.rollback();
    });

    it('contending writers see a definite conflict, and the winner stays intact', async () => {
      const [left, right] = await open(target);
      const key = `k-${crypto.randomUUID()}`;
      const seed = await left.begin({ purpose: 'admission' });
      await seed.put(key, record('seed'));
      await seed.commit();

      const first = await left.begin({ purpose: 'abort_intent' });
      const second = await right.begin({ purpose: 'abort_intent' });
      expect(await first.read(key)).toEqual(record('seed'));
      expect(await second.read(key)).toEqual(record('seed'));
      await first.put(key, record('first'));
      // The loser is told before or at commit, never silently overwriting.
      // Its outcome is caught at once: on PostgreSQL the loser's write may fail while the
      // winner's commit is still being acknowledged.
      const secondWrite = (async () => {
        await second.put(key, record('second'));
        await second.commit();
      })().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      await first.commit();
      const error = await secondWrite;
      expect(PromptStoreError.isInstance(error), String(error)).toBe(true);
      expect((error as PromptStoreError).reason).toBe('conflict');
      await second.rollback();
      const check = await right.begin({ purpose: 'inspection' });
      expect(await check.read(key)).toEqual(record('first'));
      await check.rollback();
    });
  });
}

describe('a SQLite prompt store connection', () => {
  it('commits with synchronous=FULL and fullfsync in WAL mode, on a new file and when reopened', () => {
    const dir = mkdtempSync(join(tmpdir(), 'factum-prompt-durable-'));
    try {
      const path = join(dir, 'prompts.sqlite');
      for (let open = 0; open < 2; open += 1) {
        const database = connectDurably(path, 0);
        try {
          expect(database.pragma('journal_mode', { simple: true })).toBe('wal');
          // A read first: SQLite applies its WAL default when a connection first opens the WAL.
          database.prepare('select 1').get();
          expect(database.pragma('synchronous', { simple: true })).toBe(2);
          expect(database.pragma('fullfsync', { simple: true })).toBe(1);
        } finally {
          database.close();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
