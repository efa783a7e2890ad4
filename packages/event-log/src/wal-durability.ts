import { closeSync, fdatasync, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { CompiledQuery, type Kysely } from 'kysely';
import type { LogDatabase } from './log-schema.js';

const full = CompiledQuery.raw('pragma synchronous = FULL');
const normal = CompiledQuery.raw('pragma synchronous = NORMAL');

/**
 * How a SQLite batch reaches the disk. better-sqlite3 is synchronous: with
 * `synchronous=FULL` the WAL fsync runs inside `COMMIT` and the whole process waits for
 * the disk (measured with 64 writers: loop gaps p99 13–21 ms). So a batch of several
 * writes commits with `synchronous=NORMAL` — same WAL, same checkpoint syncs, no sync
 * in `COMMIT` — and then `fdatasync`s the WAL on libuv's thread pool before anyone is
 * told: what is on disk at acknowledgement is what FULL would have put there, and the
 * loop serves others meanwhile. A lone write keeps FULL: nobody waits behind it, and two
 * thread hops would cost it more than the fsync it hides.
 *
 * After one failed sync nothing later can be proven durable (the kernel may have dropped
 * the dirty pages, and WAL recovery stops at the first lost frame), so every later batch
 * fails with the first error.
 */
export class WalDurability {
  readonly #walPath: string;
  #deferred = false;
  #fd: number | undefined;
  #failure: Error | undefined;

  constructor(databasePath: string) {
    this.#walPath = `${databasePath}-wal`;
  }

  /** Before `BEGIN`: chooses whether `COMMIT` syncs (`deferred` false) or `settle` will. */
  async prepare(connection: Kysely<LogDatabase>, deferred: boolean): Promise<void> {
    if (this.#failure !== undefined) throw this.#failure;
    if (deferred === this.#deferred) return;
    await connection.executeQuery(deferred ? normal : full);
    this.#deferred = deferred;
  }

  /** After `COMMIT`: resolves once every WAL frame written so far is on stable storage. */
  settle(): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (!this.#deferred) return Promise.resolve();
    let fd: number;
    try {
      fd = this.#open();
    } catch (error) {
      return Promise.reject(this.#fail(error));
    }
    return new Promise((resolve, reject) => {
      fdatasync(fd, (error) => (error ? reject(this.#fail(error)) : resolve()));
    });
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }

  #open(): number {
    if (this.#fd !== undefined) return this.#fd;
    // SQLite keeps the WAL file (same inode) while any connection is open, so one
    // descriptor serves the log's lifetime. The directory is synced once so that the
    // WAL's own entry survives a power loss.
    const directory = openSync(dirname(this.#walPath), 'r');
    try {
      fsyncSync(directory);
    } finally {
      closeSync(directory);
    }
    this.#fd = openSync(this.#walPath, 'r');
    return this.#fd;
  }

  #fail(error: unknown): Error {
    this.#failure ??= new Error(`cannot sync the write-ahead log ${this.#walPath}`, { cause: error });
    return this.#failure;
  }
}
