// A child process that runs one call of a tool that charges a deduplicating service
// with its idempotency key, then kills itself (SIGKILL) after the service answered and
// before the settlement is recorded: the outcome is lost, the effect happened.
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { RunTools } from '../../src/index.ts';
import { invocation, seed } from './fixtures.ts';
import { keyedCatalog } from './keyed-tool.ts';

const [file, url] = process.argv.slice(2) as [string, string];
const log = await EventLog.open(file);
const call = { id: 'c1', name: 'charge', input: { amount: 5 } };
await seed(log, invocation, [call]);
const catalog = keyedCatalog(url, () => process.kill(process.pid, 'SIGKILL'));
const run = new RunTools({ sink: log, invocation, catalog, mode: 'direct', code: new CodeExecutor() });
await (await run.capture('.')).intoStep('step').invoke(call);
