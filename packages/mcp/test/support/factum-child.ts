// A Factum process making one MCP call of the keyed server; the parent kills it
// (SIGKILL) once the server has recorded the request: mid-call, after T1, before T2.
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { RunTools, ToolCatalog } from '@factum/tools';
import { McpToolSource } from '../../src/index.ts';
import { invocation, seed } from './log-fixtures.ts';
import { keyed } from './servers.ts';

const [file, dir, tool] = process.argv.slice(2) as [string, string, string];
const log = await EventLog.open(file);
const call = { id: 'c1', name: tool, input: { amount: 7 } };
await seed(log, invocation, [call]);
const source = await McpToolSource.connect(keyed(dir));
const catalog = new ToolCatalog(source.registrations());
const run = new RunTools({ sink: log, invocation, catalog, mode: 'direct', code: new CodeExecutor() });
await (await run.capture('.')).intoStep('step').invoke(call);
