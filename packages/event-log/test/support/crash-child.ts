// A child process that appends in a loop and is killed (by itself, with SIGKILL) at a
// named failpoint inside the log's commit path. It prints every batch it is about to
// commit and every write whose promise resolved, so the parent can check after reopen.
import { writeSync } from 'node:fs';
import { EventLog } from '../../src/index.ts';
import { facts, invocation, write } from './facts.ts';

const [file, failpoint, countText] = process.argv.slice(2) as [string, string, string];
let remaining = Number(countText);
const say = (line: string) => writeSync(1, `${line}\n`);
const maybeDie = (point: string) => {
  if (point !== failpoint) return;
  remaining -= 1;
  if (remaining <= 0) process.kill(process.pid, 'SIGKILL');
};

const log = await EventLog.open(file, {
  // Lone writes stay on the event loop even on a slow disk, so kills land in both kinds.
  loneCommitBudgetMs: Number.POSITIVE_INFINITY,
  hooks: {
    batchStarted: () => maybeDie('batchStarted'),
    beforeCommit: (batch) => {
      say(`batch ${batch.committer} ${batch.eventIds.join(',')}`);
      maybeDie('beforeCommit');
    },
    afterCommit: () => maybeDie('afterCommit'),
  },
});
// Ready before the first batch, so that batches of several writes commit in the thread.
await log.startWriterThread();
const worker = Number(process.pid);
for (let round = 0; ; round += 1) {
  // Eight sessions write at once, so batches hold several writes and commit in the writer
  // thread; every third round one session writes alone, on the event loop.
  await Promise.all(
    Array.from({ length: round % 3 === 2 ? 1 : 8 }, async (_, lane) => {
      const at = invocation(`-${worker}-${round}-${lane}`, `session-${worker}-${lane}`);
      const first = write(at, facts.opened());
      await log.append(first);
      say(`acked ${first.event.id}`);
      const last = write(at, facts.ended());
      await log.append(last);
      say(`acked ${last.event.id}`);
    }),
  );
  maybeDie('between');
}
