// The effect ledger: the world as the torture harness sees it. An effect appends one
// line and fsyncs it before it returns, so after a SIGKILL the file holds every effect
// that happened, whatever the log managed to record.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';

/**
 * One effect that happened. A host of several says which one ran it, under which epoch
 * of its lease (the one its T1 was written under), and when, by the machine's clock in
 * milliseconds since the epoch — the clock PostgreSQL on the same machine reads.
 * @typedef {{ readonly key: string, readonly tool: string, readonly pid: number, readonly amount?: number | null, readonly host?: string, readonly epoch?: number, readonly at?: number }} LedgerEntry
 */

/**
 * Appends an entry and makes it durable before returning.
 * @param {string} path
 * @param {LedgerEntry} entry
 */
export function appendLedger(path, entry) {
  const fd = openSync(path, 'a');
  try {
    // One write of one short line: a kill cannot leave half of it behind.
    writeSync(fd, `${JSON.stringify(entry)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Every entry of the ledger, in order; a line that does not parse is kept as `torn`.
 * @param {string} path
 * @returns {{ entries: LedgerEntry[], torn: string[] }}
 */
export function readLedger(path) {
  if (!existsSync(path)) return { entries: [], torn: [] };
  /** @type {LedgerEntry[]} */
  const entries = [];
  /** @type {string[]} */
  const torn = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line === '') continue;
    try {
      const value = JSON.parse(line);
      if (typeof value?.key !== 'string' || typeof value?.tool !== 'string') torn.push(line);
      else entries.push(value);
    } catch {
      torn.push(line);
    }
  }
  return { entries, torn };
}
