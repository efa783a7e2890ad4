import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { LogTarget } from './event-log.js';

/** A fresh, empty store for one test: a SQLite file in a temp dir, or a new PostgreSQL database. */
export type TestStore = AsyncDisposable & {
  readonly name: 'sqlite' | 'postgres';
  readonly target: LogTarget;
  /** Runs raw SQL against the store, bypassing the log (to corrupt a row, say). */
  raw(statement: string): Promise<void>;
};

/** Makes test stores of one kind. */
export type TestStoreFactory = { readonly name: 'sqlite' | 'postgres'; create(): Promise<TestStore> };

/**
 * The stores a parameterised suite runs against: SQLite and PostgreSQL, always. The
 * PostgreSQL server is the one `FACTUM_TEST_POSTGRES_URL` names (its role must be able to
 * create databases; each test gets its own, dropped afterwards). The workspace's vitest
 * setup (`factumVitest({ postgres: true })`) sets it to an embedded PostgreSQL when it is
 * not set; a PostgreSQL store made without it fails with a clear error, never skips.
 *
 * @example
 * describe.each(testStores())('the log on $name', (stores) => {
 *   it('…', async () => {
 *     await using store = await stores.create();
 *     const log = await EventLog.open(store.target);
 *   });
 * });
 */
export function testStores(env: NodeJS.ProcessEnv = process.env): TestStoreFactory[] {
  return [
    { name: 'sqlite', create: async () => sqliteStore() },
    { name: 'postgres', create: () => postgresStore(postgresUrl(env)) },
  ];
}

function postgresUrl(env: NodeJS.ProcessEnv): string {
  const url = env.FACTUM_TEST_POSTGRES_URL;
  if (!url) {
    throw new Error(
      'FACTUM_TEST_POSTGRES_URL is not set: run the suite with the workspace vitest config (factumVitest({ postgres: true }) starts an embedded PostgreSQL), or name a server',
    );
  }
  return url;
}

function sqliteStore(): TestStore {
  const directory = mkdtempSync(join(tmpdir(), 'factum-store-'));
  const file = join(directory, 'events.sqlite');
  return {
    name: 'sqlite',
    target: file,
    async raw(statement) {
      const database = new Database(file);
      try {
        database.exec(statement);
      } finally {
        database.close();
      }
    },
    async [Symbol.asyncDispose]() {
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

async function postgresStore(adminUrl: string): Promise<TestStore> {
  const name = `factum_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  await withClient(adminUrl, (client) => client.query(`create database ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const target = url.toString();
  return {
    name: 'postgres',
    target: { postgres: target },
    raw: (statement) => withClient(target, (client) => client.query(statement)).then(() => undefined),
    async [Symbol.asyncDispose]() {
      await withClient(adminUrl, (client) => client.query(`drop database if exists ${name} with (force)`));
    },
  };
}

/** Runs `work` on a plain connection to the PostgreSQL at `url`, outside any log, and closes it. */
export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export { FaultProxy, type ProxyMode } from './fault-proxy.js';
