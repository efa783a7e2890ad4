// The baselines the log is measured against: plain better-sqlite3 writing the same rows
// into the same table and indexes with the same pragmas, and nothing else — no rules,
// no digests, no queue. What the log costs beyond them is the library's own price.
import { canonicalJson, RuntimeEvent } from '@factum/agent-facts';
import Database from 'better-sqlite3';
import { at, observed } from './fixtures.ts';

/** A digest-sized placeholder, so the raw rows are as long as the log's. */
const digest = `sha256:${'0'.repeat(64)}`;

function openRaw(path: string): Database.Database {
  const raw = new Database(path);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = FULL');
  raw.exec(`create table events (sequence integer primary key, event_id text not null unique, session_id text not null,
    invocation_id text not null, run_id text not null, kind text not null, operation_id text, body text not null,
    bytes integer not null, digest text not null, session_digest text not null);
    create index by_session on events (session_id, sequence);
    create index by_invocation on events (session_id, invocation_id, sequence);`);
  return raw;
}

/**
 * Inserts made by one writer: `insert(session)` makes the same event the log's writers
 * make (`RuntimeEvent.create` and its canonical JSON) and inserts its row.
 */
function rawInserter(raw: Database.Database): (session: string) => void {
  const insert = raw.prepare('insert into events values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  let sequence = 0;
  return (session) => {
    const event = RuntimeEvent.create(at(session), observed);
    const body = canonicalJson(event);
    sequence += 1;
    insert.run(
      sequence,
      event.id,
      session,
      'i',
      'r',
      'model_observed',
      null,
      body,
      body.length,
      digest,
      digest,
    );
  };
}

/** One durable transaction per row (autocommit). */
export function rawLoneAppends(path: string): () => void {
  const insert = rawInserter(openRaw(path));
  return () => insert('s');
}

/**
 * The ideal batch: one writer inserting `writers` rows (one per session) per durable
 * transaction — what 64 writers grouping perfectly would cost. `round(count)` does it
 * `count` times on the same file and returns rows per second.
 */
export function rawIdealBatches(
  path: string,
  writers: number,
): { round: (count: number) => number; close: () => void } {
  const raw = openRaw(path);
  const insert = rawInserter(raw);
  const batch = raw.transaction(() => {
    for (let w = 0; w < writers; w += 1) insert(`s${w}`);
  });
  return {
    round(count) {
      const started = performance.now();
      for (let round = 0; round < count; round += 1) batch.immediate();
      return (writers * count) / ((performance.now() - started) / 1000);
    },
    close: () => raw.close(),
  };
}
