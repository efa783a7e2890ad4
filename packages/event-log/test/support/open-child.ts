// A child process that opens a log once. It says `ready` when its modules are loaded;
// with `--wait` it then waits for a line on stdin, so that several children open at the
// same moment. It says `opened` once the log is open and closed again.
import { writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { EventLog } from '../../src/index.ts';

const [target, mode] = process.argv.slice(2) as [string, string | undefined];
writeSync(1, 'ready\n');
if (mode === '--wait') {
  const lines = createInterface({ input: process.stdin });
  await new Promise<void>((resolve) => lines.once('line', () => resolve()));
  lines.close();
}
const log = await EventLog.open(target.startsWith('postgres') ? { postgres: target } : target);
await log.close();
writeSync(1, 'opened\n');
