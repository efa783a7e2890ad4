// A second live process on a log: opens a run in a session of its own, says `ready`, waits
// for a line on stdin, then commits `count` model steps there one at a time (with
// `pauseAt`, it says `half` after that many and waits for another line), tries to
// open a run in `shared` (where the other process holds one) and ends its own. Its last
// line says `done <steps committed> <what the opening in shared met>`.
import { writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { AppendRefusedError, EventLog } from '../../src/index.ts';
import { facts, invocation, write } from './facts.ts';

const [file, name, count, pauseAt] = process.argv.slice(2) as [string, string, string, string?];
// Its own commits stay on its event loop: the bundle that makes this child a plain `node`
// process leaves out the writer thread's file, and its placement is not what is tested.
const log = await EventLog.open(file, { writerThread: false });
const own = invocation(`-${name}`, `own-${name}`);
await log.commit(write(own, facts.opened()));
writeSync(1, 'ready\n');
const lines = createInterface({ input: process.stdin });
const nextLine = () => new Promise<void>((resolve) => lines.once('line', () => resolve()));
await nextLine();
let steps = 0;
for (let index = 0; index < Number(count); index += 1) {
  if (pauseAt !== undefined && index === Number(pauseAt)) {
    writeSync(1, 'half\n');
    await nextLine();
  }
  await log.commit(write(own, facts.completed(`${name}-${index}`, [])));
  steps += 1;
}
lines.close();
const intruder = await log.commit(write(invocation(`-${name}`, 'shared'), facts.opened())).then(
  () => 'committed',
  (error) => (AppendRefusedError.isInstance(error) ? error.code : String(error)),
);
await log.commit(write(own, facts.ended()));
writeSync(1, `done ${steps} ${intruder}\n`);
await log.close();
