import { Worker } from 'node:worker_threads';
import type { RuntimeEvent } from '@factum/agent-facts';
import { JUDGED_BY_KIND } from './append-rules.js';
import type { BatchInfo, BatchResult, BatchWriter, StagedWrite } from './staged-write.js';
import {
  type FromWriterThread,
  type JudgedEvent,
  RELEASED,
  THREW,
  type ToWriterThread,
  type WireBatchResult,
  type WireCause,
} from './writer-thread-protocol.js';

/** A message before the thread client numbers it. */
type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

type Request = {
  resolve(reply: Extract<FromWriterThread, { type: 'done' }>): void;
  reject(error: Error): void;
};

/** Rebuilds a cause that crossed from the thread as an `Error` with its name and code. */
function fromWireCause(cause: WireCause): Error {
  return Object.assign(new Error(cause.message), {
    name: cause.name,
    ...(cause.code ? { code: cause.code } : {}),
  });
}

/**
 * Where the thread's code is: next to this module in `dist`; from the TypeScript
 * sources (through a loader) when this module itself runs from them.
 */
function spawn(signal: SharedArrayBuffer): Worker {
  const here = import.meta.url;
  if (!here.endsWith('.ts'))
    return new Worker(new URL('./writer-thread.js', here), { workerData: { signal } });
  return new Worker(new URL('./writer-thread-source.mjs', here), {
    execArgv: ['--conditions=@factum/source'],
    workerData: { signal, entry: new URL('./writer-thread.ts', here).href },
  });
}

/**
 * The process's writer thread, shared by every SQLite log the process opens: started
 * by the first write, it keeps the process alive only while a request is in flight.
 * If it dies, every request in flight fails and the next log starts a new one.
 */
class WriterThread {
  static #current: WriterThread | undefined;

  readonly #worker: Worker;
  readonly #signal = new Int32Array(new SharedArrayBuffer(8));
  readonly #requests = new Map<number, Request>();
  readonly #pauses = new Map<number, (batch: BatchInfo) => void>();
  readonly #hookErrors = new Map<number, unknown>();
  #nextId = 1;
  #failure: Error | undefined;

  static shared(): WriterThread {
    if (WriterThread.#current === undefined || WriterThread.#current.#failure !== undefined) {
      WriterThread.#current = new WriterThread();
    }
    return WriterThread.#current;
  }

  private constructor() {
    this.#worker = spawn(this.#signal.buffer as SharedArrayBuffer);
    this.#worker.unref();
    this.#worker.on('message', (message: FromWriterThread) => this.#receive(message));
    this.#worker.on('error', (error) => this.#fail(error));
    this.#worker.on('exit', (code) => this.#fail(new Error(`the writer thread exited with code ${code}`)));
  }

  /** Sends a request; `pause` is the log's beforeCommit hook, run here while the thread waits. */
  request(
    message: WithoutId<ToWriterThread>,
    pause?: (batch: BatchInfo) => void,
  ): { id: number; reply: Promise<Extract<FromWriterThread, { type: 'done' }>> } {
    const id = this.#nextId++;
    if (pause !== undefined) this.#pauses.set(id, pause);
    const reply = new Promise<Extract<FromWriterThread, { type: 'done' }>>((resolve, reject) => {
      if (this.#failure !== undefined) {
        reject(this.#failure);
        return;
      }
      if (this.#requests.size === 0) this.#worker.ref();
      this.#requests.set(id, { resolve, reject });
      this.#worker.postMessage({ ...message, id });
    });
    return { id, reply };
  }

  /** True once the thread has died: its requests fail, and logs move to a new one. */
  get failed(): boolean {
    return this.#failure !== undefined;
  }

  static async stopCurrent(): Promise<void> {
    const current = WriterThread.#current;
    if (current === undefined) return;
    current.#fail(new Error('the writer thread was stopped'));
    await current.#worker.terminate();
  }

  /** Forgets a log's pause hook once the log is closed. */
  forget(log: number): void {
    this.#pauses.delete(log);
  }

  #receive(message: FromWriterThread): void {
    if (message.type === 'before_commit') {
      this.#release(message.log, message.batch);
      return;
    }
    const request = this.#requests.get(message.id);
    this.#requests.delete(message.id);
    if (this.#requests.size === 0) this.#worker.unref();
    request?.resolve(message);
  }

  /** Runs a log's beforeCommit hook, then lets the waiting commit go on (or roll back). */
  #release(log: number, batch: BatchInfo): void {
    let threw = 0;
    try {
      this.#pauses.get(log)?.(batch);
    } catch (error) {
      threw = 1;
      this.#hookErrors.set(log, error);
    }
    Atomics.store(this.#signal, THREW, threw);
    Atomics.store(this.#signal, RELEASED, 1);
    Atomics.notify(this.#signal, RELEASED);
  }

  /** The error the log's beforeCommit hook threw during its last batch, if it did. */
  takeHookError(log: number): unknown {
    const error = this.#hookErrors.get(log);
    this.#hookErrors.delete(log);
    return error;
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    for (const request of this.#requests.values()) request.reject(this.#failure);
    this.#requests.clear();
    this.#worker.unref();
  }
}

/**
 * A SQLite log's batches, committed in the process's writer thread: the transaction,
 * its rules, its statements and its fsync never block the event loop. The log has its
 * own connection there; reads stay on the log's connection on the event loop, which
 * sees a batch only once it is durable (a WAL reader sees a commit after its sync).
 * If the thread dies, the batch in it is `outcome_unknown`, and the next batch opens
 * the log again in a new thread (the rules reread their state from the file).
 */
export class ThreadWriter implements BatchWriter {
  readonly committer = 'writer_thread';
  readonly endsInIo = true;
  readonly #path: string;
  readonly #beforeCommit: ((batch: BatchInfo) => void) | undefined;
  #connection: { thread: WriterThread; log: Promise<number>; opened: boolean } | undefined;

  constructor(path: string, beforeCommit: ((batch: BatchInfo) => void) | undefined) {
    this.#path = path;
    this.#beforeCommit = beforeCommit;
  }

  #connect(): { thread: WriterThread; log: Promise<number>; opened: boolean } {
    if (this.#connection !== undefined && !this.#connection.thread.failed) return this.#connection;
    const thread = WriterThread.shared();
    const open = { type: 'open', path: this.#path, pauses: this.#beforeCommit !== undefined } as const;
    const { id, reply } = thread.request(open, this.#beforeCommit);
    const connection = {
      thread,
      opened: false,
      log: reply.then((done) => {
        if (done.error !== undefined) throw fromWireCause(done.error);
        connection.opened = true;
        return id;
      }),
    };
    // A failed opening is reported to whoever awaits it (`write`, `start`), not as unhandled.
    connection.log.catch(() => undefined);
    this.#connection = connection;
    return connection;
  }

  /**
   * Whether the thread is running and has opened this log: a batch sent now waits only
   * for its own commit, not for a thread to start (about 0.1–0.3 s: a worker, the bundle
   * compiled, the file opened).
   */
  get ready(): boolean {
    return this.#connection?.opened === true && !this.#connection.thread.failed;
  }

  /** Starts the thread and opens this log there, if not done yet; resolves once it has. */
  async start(): Promise<void> {
    await this.#connect().log;
  }

  async write(batch: readonly StagedWrite[]): Promise<BatchResult> {
    const { thread, log: opening } = this.#connect();
    let log: number;
    try {
      log = await opening;
    } catch (cause) {
      // The batch never reached the thread.
      return { kind: 'failed', committing: false, cause, outcomes: [] };
    }
    // Only what is there crosses: a model fact's payload stays here.
    const writes = batch.map(({ event, body, bytes, digest, result, writer, takeover, onHead }) => ({
      event: judged(event),
      body,
      bytes,
      digest,
      ...(result === undefined ? {} : { result }),
      ...(writer === undefined ? {} : { writer }),
      ...(takeover ? { takeover } : {}),
      ...(onHead === undefined ? {} : { onHead }),
    }));
    let done: Extract<FromWriterThread, { type: 'done' }>;
    try {
      done = await thread.request({ type: 'write', log, writes }).reply;
    } catch (cause) {
      // The thread died with the batch in it: it may have committed.
      return { kind: 'failed', committing: true, cause, outcomes: [] };
    }
    if (done.result === undefined) {
      const cause = fromWireCause(
        done.error ?? { name: 'Error', message: 'the writer thread sent no result' },
      );
      return { kind: 'failed', committing: false, cause, outcomes: [] };
    }
    const result: WireBatchResult = done.result;
    if (result.kind === 'committed') return result;
    return { ...result, cause: thread.takeHookError(log) ?? fromWireCause(result.cause) };
  }

  async close(): Promise<void> {
    const connection = this.#connection;
    this.#connection = undefined;
    if (connection === undefined || connection.thread.failed) return;
    const log = await connection.log.catch(() => undefined);
    if (log === undefined) return;
    connection.thread.forget(log);
    await connection.thread.request({ type: 'close', log }).reply.catch(() => undefined);
  }
}

/** What the rules read of `event` (see `JudgedEvent`). */
function judged(event: RuntimeEvent): JudgedEvent {
  const { id, invocation, fact } = event;
  return { id, invocation, fact: JUDGED_BY_KIND.has(fact.kind) ? { kind: fact.kind } : fact };
}

/** Stops the process's writer thread as if it had crashed (tests of that path). */
export async function stopWriterThread(): Promise<void> {
  await WriterThread.stopCurrent();
}
