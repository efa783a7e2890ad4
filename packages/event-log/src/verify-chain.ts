import { chainLink, contentDigest, RuntimeEvent } from '@factum/agent-facts';
import type { Kysely } from 'kysely';
import { EventLogError } from './event-log-error.js';
import { allRows } from './log-queries.js';
import type { LogDatabase } from './log-schema.js';

/**
 * The log's chain at one sequence: the global chain digest of every event up to and
 * including it. Kept somewhere the log's writers cannot reach (a ticket, a release
 * note, another system's log), it lets a later `verifyChain` show that the log still
 * holds that prefix, unchanged and not cut short.
 */
export type ChainAnchor = { readonly sequence: number; readonly digest: string };

/**
 * The outcome of checking every stored event against its chain digests. `head` is
 * the last event that checked out (`undefined` for an empty log, or a break at the
 * first row): an anchor for a later check.
 */
export type ChainReport =
  | { readonly ok: true; readonly events: number; readonly head: ChainAnchor | undefined }
  | {
      readonly ok: false;
      readonly events: number;
      readonly head: ChainAnchor | undefined;
      readonly brokenAt: number;
      readonly reason: string;
    };

/** What `verifyChain` checks besides the chains themselves. */
export type VerifyOptions = {
  /** Digests recorded earlier: each must still be the chain's at its sequence. */
  readonly anchors?: readonly ChainAnchor[];
};

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/**
 * Recomputes the global and per-session chains from the stored canonical bytes, checks
 * the sequence has no gap, that every row parses, and that the chain passes through
 * every anchor. Reports the first break.
 */
export async function verifyChain(
  db: Kysely<LogDatabase>,
  options: VerifyOptions = {},
): Promise<ChainReport> {
  const anchors = anchorsBySequence(options.anchors ?? []);
  let previous: string | undefined;
  const sessions = new Map<string, string>();
  let expected = 1;
  let events = 0;
  let head: ChainAnchor | undefined;
  const broken = (brokenAt: number, reason: string): ChainReport => ({
    ok: false,
    events,
    head,
    brokenAt,
    reason,
  });
  for await (const row of allRows(db)) {
    if (row.sequence !== expected) return broken(row.sequence, `sequence ${expected} is missing`);
    try {
      RuntimeEvent.parse(JSON.parse(row.body));
    } catch {
      return broken(row.sequence, 'the row does not parse');
    }
    const bodyDigest = contentDigest(row.body);
    const digest = chainLink(previous, bodyDigest);
    if (digest !== row.digest) return broken(row.sequence, 'the global chain digest does not match');
    const sessionDigest = chainLink(sessions.get(row.session_id), bodyDigest);
    if (sessionDigest !== row.session_digest)
      return broken(row.sequence, 'the session chain digest does not match');
    const anchored = anchors.get(row.sequence);
    if (anchored !== undefined && anchored !== digest)
      return broken(row.sequence, `the chain at sequence ${row.sequence} is not the anchored ${anchored}`);
    previous = digest;
    sessions.set(row.session_id, sessionDigest);
    head = { sequence: row.sequence, digest };
    expected += 1;
    events += 1;
  }
  const beyond = [...anchors.keys()].filter((sequence) => sequence >= expected);
  if (beyond.length > 0) {
    const first = Math.min(...beyond);
    return broken(
      first,
      `the log ends at sequence ${expected - 1}, before the anchor at ${first}: events were removed`,
    );
  }
  return { ok: true, events, head };
}

/** The anchors by sequence; an anchor that could never match is refused before any read. */
function anchorsBySequence(anchors: readonly ChainAnchor[]): Map<number, string> {
  const bySequence = new Map<number, string>();
  for (const { sequence, digest } of anchors) {
    if (!Number.isSafeInteger(sequence) || sequence < 1)
      throw new EventLogError(
        'invalid_option',
        `an anchor's sequence must be a whole number ≥ 1, not ${sequence}`,
      );
    if (typeof digest !== 'string' || !DIGEST.test(digest))
      throw new EventLogError(
        'invalid_option',
        `an anchor's digest must be sha256: and 64 hex digits, not ${JSON.stringify(String(digest).slice(0, 80))}`,
      );
    const earlier = bySequence.get(sequence);
    if (earlier !== undefined && earlier !== digest)
      throw new EventLogError('invalid_option', `two anchors at sequence ${sequence} name different digests`);
    bySequence.set(sequence, digest);
  }
  return bySequence;
}
