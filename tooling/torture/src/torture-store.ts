import { join } from 'node:path';
import type { LogTarget } from '@factum/event-log';
import { type TestStore, testStores } from '@factum/event-log/testing';

/** Which store a torture run's logs live on. */
export type StoreName = 'sqlite' | 'postgres';

/**
 * Where a run's logs are made: one new log per rotation, each a fresh SQLite file in the
 * worker's directory or a fresh PostgreSQL database. The driver and its checks see only
 * a `LogTarget`, so a mode that puts several processes on one log needs nothing else.
 */
export type TortureStore = {
  readonly name: StoreName;
  /** A new, empty log (nothing opened it yet). */
  fresh(directory: string, generation: number): Promise<LogTarget>;
  /** Removes every log it made, unless they are kept for inspection. */
  dispose(keep: boolean): Promise<void>;
};

/** Logs as SQLite files beside their ledgers (removed with the run's directory). */
export function sqliteTortureStore(): TortureStore {
  return {
    name: 'sqlite',
    fresh: async (directory, generation) => join(directory, `log-${generation}.sqlite`),
    dispose: async () => {},
  };
}

/**
 * Logs as new databases on the PostgreSQL server `adminUrl` names (its role may create
 * databases), dropped at the end of a run unless kept.
 */
export function postgresTortureStore(adminUrl: string): TortureStore {
  const factory = testStores({ FACTUM_TEST_POSTGRES_URL: adminUrl }).find(
    (store) => store.name === 'postgres',
  );
  if (factory === undefined) throw new Error('no PostgreSQL test store');
  const made: TestStore[] = [];
  return {
    name: 'postgres',
    async fresh() {
      const store = await factory.create();
      made.push(store);
      return store.target;
    },
    async dispose(keep) {
      if (keep) return;
      for (const store of made.splice(0)) await store[Symbol.asyncDispose]();
    },
  };
}

/** A log's name for messages: its file, or its database without the password. */
export function describeTarget(target: LogTarget): string {
  if (typeof target === 'string') return target;
  const url = new URL(target.postgres);
  url.password = '';
  return url.toString();
}
