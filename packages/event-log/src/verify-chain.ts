import { chainLink, contentDigest, RuntimeEvent } from '@factum/agent-facts';
import type { Kysely } from 'kysely';
import { allRows } from './log-queries.js';
import type { LogDatabase } from './log-schema.js';

/** The outcome of checking every stored event against its chain digests. */
export type ChainReport =
  | { readonly ok: true; readonly events: number }
  | { readonly ok: false; readonly events: number; readonly brokenAt: number; readonly reason: string };

/**
 * Recomputes the global and per-session chains from the stored canonical bytes, checks
 * the sequence has no gap, and that every row parses. Reports the first break.
 */
export async function verifyChain(db: Kysely<LogDatabase>): Promise<ChainReport> {
  let previous: string | undefined;
  const sessions = new Map<string, string>();
  let expected = 1;
  let events = 0;
  for await (const row of allRows(db)) {
    const broken = (reason: string): ChainReport => ({ ok: false, events, brokenAt: row.sequence, reason });
    if (row.sequence !== expected) return broken(`sequence ${expected} is missing`);
    try {
      RuntimeEvent.parse(JSON.parse(row.body));
    } catch {
      return broken('the row does not parse');
    }
    const bodyDigest = contentDigest(row.body);
    const digest = chainLink(previous, bodyDigest);
    if (digest !== row.digest) return broken('the global chain digest does not match');
    const sessionDigest = chainLink(sessions.get(row.session_id), bodyDigest);
    if (sessionDigest !== row.session_digest) return broken('the session chain digest does not match');
    previous = digest;
    sessions.set(row.session_id, sessionDigest);
    expected += 1;
    events += 1;
  }
  return { ok: true, events };
}
