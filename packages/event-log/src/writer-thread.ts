// The writer thread: owns one write connection per open log and runs each batch's
// transaction (rules, inserts, `COMMIT` and its fsync) off the event loop. It imports
// no schema library and parses no event: each arrives as its canonical bytes beside
// what the rules read of it.
import { parentPort, workerData } from 'node:worker_threads';
import type { RuntimeEvent } from '@factum/agent-facts';
import type { Kysely } from 'kysely';
import { commitBatch } from './batch-commit.js';
import { type SyncQueryRun, sqliteDialect } from './log-dialect.js';
import type { LogDatabase } from './log-schema.js';
import { RuleCache } from './rule-cache.js';
import { connectSqlite } from './sqlite-connection.js';
import type { BatchInfo, BatchResult, StagedWrite } from './staged-write.js';
import {
  type FromWriterThread,
  RELEASED,
  THREW,
  type ToWriterThread,
  toWireCause,
  type WireBatchResult,
  type WireWrite,
} from './writer-thread-protocol.js';

type OpenLog = {
  readonly db: Kysely<LogDatabase>;
  readonly direct: SyncQueryRun;
  readonly cache: RuleCache;
  readonly pauses: boolean;
};

const port = parentPort!;
const signal = new Int32Array((workerData as { signal: SharedArrayBuffer }).signal);
const logs = new Map<number, OpenLog>();
const send = (message: FromWriterThread) => port.postMessage(message);

/**
 * Hands `beforeCommit` to the main thread, where the hook lives, and waits for it: a
 * crash test that kills the process there stops this commit before `COMMIT`.
 */
function pauseBeforeCommit(log: number, batch: BatchInfo): void {
  Atomics.store(signal, RELEASED, 0);
  send({ type: 'before_commit', log, batch });
  Atomics.wait(signal, RELEASED, 0);
  if (Atomics.load(signal, THREW) === 1) throw new Error('the beforeCommit hook threw');
}

function stage(write: WireWrite): StagedWrite {
  return {
    // The rules read nothing else of it (`JudgedEvent`); the row is made of `body`.
    event: write.event as RuntimeEvent,
    body: write.body,
    bytes: write.bytes,
    digest: write.digest,
    result: write.result,
    writer: write.writer,
    takeover: write.takeover,
    onHead: write.onHead,
  };
}

function toWire(result: BatchResult): WireBatchResult {
  return result.kind === 'committed' ? result : { ...result, cause: toWireCause(result.cause) };
}

async function handle(message: ToWriterThread): Promise<FromWriterThread> {
  if (message.type === 'open') {
    const { db, direct } = connectSqlite(message.path);
    logs.set(message.id, { db, direct, cache: new RuleCache(), pauses: message.pauses });
    return { type: 'done', id: message.id };
  }
  const log = logs.get(message.log);
  if (log === undefined) throw new Error(`log ${message.log} is not open in the writer thread`);
  if (message.type === 'close') {
    logs.delete(message.log);
    await log.db.destroy();
    return { type: 'done', id: message.id };
  }
  const context = {
    dialect: sqliteDialect,
    cache: log.cache,
    direct: log.direct,
    beforeCommit: log.pauses ? (batch: BatchInfo) => pauseBeforeCommit(message.log, batch) : undefined,
  };
  const result = await commitBatch(log.db, context, message.writes.map(stage));
  return { type: 'done', id: message.id, result: toWire(result) };
}

port.on('message', (message: ToWriterThread) => {
  handle(message).then(send, (error: unknown) =>
    send({ type: 'done', id: message.id, error: toWireCause(error) }),
  );
});
