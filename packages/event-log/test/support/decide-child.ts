// A child process that decides one approval. It says `ready` once the log is open, then
// waits for a line on stdin (so several children decide at the same moment), writes
// `approval_decided` and prints `won` or the refusal's code.
import { writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { EventWrite, RuntimeEvent } from '@factum/agent-facts';
import { AppendRefusedError, EventLog } from '../../src/index.ts';

const [target, json] = process.argv.slice(2) as [string, string];
const { invocation, operationId, inputDigest, by } = JSON.parse(json);
const log = await EventLog.open(target.startsWith('postgres') ? { postgres: target } : target);
writeSync(1, 'ready\n');
const lines = createInterface({ input: process.stdin });
await new Promise<void>((resolve) => lines.once('line', () => resolve()));
lines.close();
const fact = {
  kind: 'approval_decided' as const,
  operationId,
  decision: 'approved' as const,
  inputDigest,
  by,
};
try {
  await log.append(EventWrite.plain(RuntimeEvent.create(invocation, fact)));
  writeSync(1, 'won\n');
} catch (error) {
  writeSync(1, `${AppendRefusedError.isInstance(error) ? error.code : String(error)}\n`);
}
await log.close();
