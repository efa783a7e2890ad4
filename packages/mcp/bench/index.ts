// MCP benchmarks: one JSON line per measure, each against a baseline of the same run.
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { EventWrite, RuntimeEvent, ToolResult } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { RunTools, ToolCatalog } from '@factum/tools';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { medianMs, report } from '../../../tooling/bench/harness.ts';
import { McpToolSource } from '../src/index.ts';

const require = createRequire(import.meta.url);
const everything = join(
  dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist',
  'index.js',
);
const root = mkdtempSync(join(tmpdir(), 'factum-mcp-bench-'));
const invocation = { sessionId: 's', turnId: 't', runId: 'r', invocationId: 'i' };

/**
 * `mcp_call`: one `echo` call of server-everything over stdio through Factum — T1
 * durable, the MCP call, T2 durable with its result — against the same call made with
 * the SDK's client directly, in alternating rounds. Each of the three ways has a server
 * process of its own: a server called back to back stays hot, one called between two
 * fsyncs wakes up each time, and the two durable ways must be compared like for like.
 */
async function mcpCall(): Promise<void> {
  const log = await EventLog.open(join(root, 'mcp.sqlite'));
  await log.append(
    EventWrite.plain(
      RuntimeEvent.create(invocation, {
        kind: 'invocation_opened',
        input: { kind: 'message', content: 'x', sourceMessages: [] },
      }),
    ),
  );
  await using source = await McpToolSource.connect({
    kind: 'stdio',
    command: process.execPath,
    args: [everything],
  });
  const run = new RunTools({
    sink: log,
    invocation,
    catalog: new ToolCatalog(source.registrations()),
    mode: 'direct',
    code: new CodeExecutor(),
  });
  const step = (await run.capture('.')).intoStep('step');
  const client = new Client({ name: 'bench', version: '0' }, { capabilities: {} });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [everything], stderr: 'ignore' }),
  );
  await client.listTools();
  const handClient = new Client({ name: 'bench-by-hand', version: '0' }, { capabilities: {} });
  await handClient.connect(
    new StdioClientTransport({ command: process.execPath, args: [everything], stderr: 'ignore' }),
  );
  await handClient.listTools();
  let id = 0;
  const nextId = () => {
    id += 1;
    return id;
  };
  const input = { message: 'benchmark' };
  const rounds = 5;
  let ours = 0;
  let direct = 0;
  let durable = 0;
  let synced = 0;
  const fsync = fsyncProbe();
  // The same call with the same two durable facts written by hand around it: what
  // any at-most-once record of the call costs, without Factum's protocol.
  const byHand = async () => {
    const operationId = `raw:${nextId()}`;
    const call = {
      id: operationId,
      name: 'echo',
      input,
      origin: { kind: 'provider' as const, stepId: 'raw' },
    };
    await log.append(
      EventWrite.plain(RuntimeEvent.create(invocation, { kind: 'tool_dispatched', operationId, call })),
    );
    const result = ToolResult.of((await handClient.callTool({ name: 'echo', arguments: input })) as never);
    const settled = RuntimeEvent.create(invocation, {
      kind: 'tool_settled',
      operationId,
      outcome: { kind: 'succeeded', result: result.reference() },
    });
    await log.append(EventWrite.withResult(settled, result));
  };
  for (let round = 0; round < rounds; round += 1) {
    ours += await medianMs(200, () => step.invoke({ id: `c${nextId()}`, name: 'echo', input }));
    direct += await medianMs(200, () => client.callTool({ name: 'echo', arguments: input }));
    durable += await medianMs(200, byHand);
    synced += await medianMs(200, fsync.once);
  }
  fsync.close();
  report({
    measure: 'mcp_call',
    unit: 'ms',
    value: ours / rounds,
    baseline: 'the same call with the SDK client directly',
    baselineValue: direct / rounds,
    goal: '<= 1.3',
    note: 'median of 200 calls, mean of 5 alternating rounds; ours includes T1 and T2 on SQLite (synchronous=FULL)',
  });
  report({
    measure: 'mcp_call_vs_durable_by_hand',
    unit: 'ms',
    value: ours / rounds,
    baseline: 'the same SDK call between two plain durable appends of its T1 and T2',
    baselineValue: durable / rounds,
    goal: '<= 1.3',
    note: "what Factum's protocol, catalog and result mapping add beyond the two fsyncs any record of the call needs",
  });
  report({
    measure: 'mcp_call_vs_two_fsyncs',
    unit: 'ms',
    value: ours / rounds,
    baseline: 'the direct SDK call plus two raw fsyncs of this disk (the least any durable T1 and T2 cost)',
    baselineValue: (direct + 2 * synced) / rounds,
    note: `one raw fsync (4 KiB write + fsync): ${(synced / rounds).toFixed(3)} ms in these rounds`,
  });
  await run.shutdown();
  await client.close();
  await handClient.close();
  await log.close();
}

/**
 * One small write and its `fsync` on the log's disk: the floor of every durable append
 * (T1 and T2 are one each). Measured in the same rounds as the calls, since a shared
 * disk's fsync varies by several times from one minute to the next.
 */
function fsyncProbe(): { once: () => void; close: () => void } {
  const fd = openSync(join(root, 'fsync.bin'), 'w');
  const page = Buffer.alloc(4096, 1);
  let position = 0;
  return {
    once: () => {
      writeSync(fd, page, 0, page.length, position);
      position = (position + page.length) % (1024 * page.length);
      fsyncSync(fd);
    },
    close: () => closeSync(fd),
  };
}

try {
  await mcpCall();
} finally {
  rmSync(root, { recursive: true, force: true });
}
