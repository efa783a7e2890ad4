// A child process that opens a run in a new session, built on its empty history. It
// first commits twice in a session of its own, so that its log knows the chain's head
// (on PostgreSQL it then goes one message), says `ready`, waits for a line on stdin, so
// that two children commit at the same moment, and says `committed` or `refused <code>`.
import { writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { AppendRefusedError, EMPTY_DIGEST, EventLog } from '../../src/index.ts';
import { facts, invocation, write } from './facts.ts';

const [target, sessionId, name] = process.argv.slice(2) as [string, string, string];
const log = await EventLog.open(target.startsWith('postgres') ? { postgres: target } : target);
const own = invocation(`-${name}`, `own-${name}`);
await log.commit(write(own, facts.opened()));
await log.commit(write(own, facts.ended()));
writeSync(1, 'ready\n');
const lines = createInterface({ input: process.stdin });
await new Promise<void>((resolve) => lines.once('line', () => resolve()));
lines.close();
const at = invocation(`-${name}`, sessionId);
const group = [
  write(at, facts.opened()),
  write(at, { kind: 'model_observed', stepId: 's', observation: { kind: 'text_delta', text: name } }),
];
const results = await Promise.allSettled(
  log.commitTogether(group, { onHead: { highWater: 0, digest: EMPTY_DIGEST } }),
);
const refused = results.map((result) =>
  result.status === 'fulfilled'
    ? 'committed'
    : AppendRefusedError.isInstance(result.reason)
      ? result.reason.code
      : String(result.reason),
);
writeSync(
  1,
  `${refused.every((outcome) => outcome === 'committed') ? 'committed' : `refused ${[...new Set(refused)].join(',')}`}\n`,
);
await log.close();
