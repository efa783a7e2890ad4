// turn_cpu_vs_undurable_loop: the client CPU of one durable turn (`Engine` + `EventLog` on
// a SQLite file) ÷ the CPU of the same turn run by an undurable loop with no log (our own
// `ModelExecutor` streaming the two requests, the tool called directly). A turn is a
// request that asks for a no-op tool, the tool, and a request that answers. The model
// server runs in a child process, so its CPU is not counted; `process.cpuUsage()` counts
// every thread of this process (the log's writer thread included). The floor, the two
// bare HTTP exchanges with nothing parsed, is reported as its own measure.
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CodeExecutor } from '@factum/code-runtime';
import { Engine } from '@factum/engine';
import { EventLog } from '@factum/event-log';
import type { ModelExecutor, ModelMessage, ProviderConfig } from '@factum/model';
import { ToolCatalog, ToolHandler } from '@factum/tools';
import { report } from '../../../tooling/bench/harness.ts';

const noop = { name: 'noop', description: 'does nothing', inputSchema: { type: 'object' } } as const;
/** The no-op tool; with `approval`, every call of it waits for a person. */
export function noopCatalog(approval = false): ToolCatalog {
  return new ToolCatalog([
    {
      definition: noop,
      handler: ToolHandler.immediate({ names: () => ['noop'], invoke: async () => ({ ok: true }) }),
      nesting: 'nestable',
      semantics: 'parallel',
      ...(approval ? { approval: 'always' as const } : {}),
    },
  ]);
}

export const catalog = noopCatalog();

export type Server = { child: ChildProcess; port: number };

export async function startServer(): Promise<Server> {
  const child = fork(new URL('./turn-model-server.mjs', import.meta.url), [], {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { port: number }).port));
    child.once('error', reject);
  });
  return { child, port };
}

/** Milliseconds of CPU (user + system, every thread) `work` took, per unit of `count`. */
export async function cpuMs(count: number, work: () => Promise<void>): Promise<number> {
  const before = process.cpuUsage();
  await work();
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / 1000 / count;
}

let turnsRun = 0;
let lanes = 0;
/** Sessions at once for the grouped turns: the peers harness's concurrency. */
const GROUPED = 32;

/**
 * `turns` durable turns one after another, in sessions of ten turns of their own (so
 * that a session's history grows as it does in use, and concurrent callers never share
 * a session).
 */
export async function durableTurns(engine: Engine, config: ProviderConfig, turns: number): Promise<void> {
  lanes += 1;
  const lane = lanes;
  for (let n = 0; n < turns; n += 1) {
    turnsRun += 1;
    const result = await engine.run({
      invocation: {
        sessionId: `s${lane}-${Math.floor(n / 10)}`,
        turnId: `t${turnsRun}`,
        runId: `r${turnsRun}`,
        invocationId: `i${turnsRun}`,
      },
      provider: config,
      configuration: { cwd: '/', toolMode: 'direct' },
      work: { kind: 'message', message: 'go', tools: catalog },
    });
    if (result.outcome.kind !== 'completed') throw new Error(`a bench turn ended ${result.outcome.kind}`);
  }
}

/** `turns` durable turns from `parallel` callers at once: their commits are grouped. */
async function groupedTurns(
  engine: Engine,
  config: ProviderConfig,
  turns: number,
  parallel: number,
): Promise<void> {
  await Promise.all(Array.from({ length: parallel }, () => durableTurns(engine, config, turns / parallel)));
}

/** The same turn with no log: stream, call the tool, stream again. */
async function undurableTurns(models: ModelExecutor, config: ProviderConfig, turns: number): Promise<void> {
  for (let n = 0; n < turns; n += 1) await undurableTurn(models, config, []);
}

/** One undurable turn of the conversation `messages` keeps (each turn a new one above). */
export async function undurableTurn(
  models: ModelExecutor,
  config: ProviderConfig,
  messages: ModelMessage[],
): Promise<void> {
  messages.push({ role: 'user', content: 'go' });
  for (let step = 0; step < 8; step += 1) {
    const stream = models.stream({ messages, tools: [noop] }, { provider: config });
    for await (const _ of stream);
    const reply = await stream.step();
    messages.push({ role: 'assistant', parts: reply.parts });
    const calls = reply.parts.filter((part) => part.kind === 'tool_call');
    if (calls.length === 0) return;
    for (const { call } of calls) {
      if (call.name !== 'noop') throw new Error(`unknown tool ${call.name}`);
      const result = { ok: true };
      messages.push({
        role: 'tool',
        callId: call.id,
        name: call.name,
        result: { kind: 'text', text: JSON.stringify(result) },
      });
    }
  }
}

/** The two HTTP exchanges of a turn, their bytes read and nothing parsed. */
async function bareTurns(port: number, turns: number): Promise<void> {
  const agent = new Agent({ keepAlive: true });
  const exchange = (last: object) =>
    new Promise<void>((resolve, reject) => {
      const body = JSON.stringify({ model: 'agent', stream: true, messages: [last] });
      const req = request(
        { host: '127.0.0.1', port, path: '/v1/chat/completions', method: 'POST', agent },
        (response) => {
          response.on('data', () => {});
          response.on('end', resolve);
          response.on('error', reject);
        },
      );
      req.on('error', reject);
      req.setHeader('content-type', 'application/json');
      req.end(body);
    });
  for (let n = 0; n < turns; n += 1) {
    await exchange({ role: 'user', content: 'go' });
    await exchange({ role: 'tool', tool_call_id: 'call_1', content: '{"ok":true}' });
  }
  agent.destroy();
}

/** The provider configuration that talks to the child's server. */
export function configOf(server: Server): ProviderConfig {
  return {
    kind: 'openai_chat_completions',
    model: 'agent',
    baseUrl: `http://127.0.0.1:${server.port}/v1`,
    auth: { apiKey: 'bench-key' },
  };
}

export async function turnCpu(models: ModelExecutor, code: CodeExecutor): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'factum-turn-cpu-'));
  const server = await startServer();
  const config = configOf(server);
  const log = await EventLog.open(join(root, 'turns.sqlite'));
  const engine = new Engine({ log, models, code });
  const turns = Number(process.env.FACTUM_BENCH_TURNS ?? 100);
  const rounds = 3;
  try {
    // Warm every path, then alternate rounds so that machine noise hits all alike.
    await durableTurns(engine, config, 30);
    await groupedTurns(engine, config, GROUPED, GROUPED);
    await undurableTurns(models, config, 30);
    await bareTurns(server.port, 30);
    const total = { durable: 0, grouped: 0, undurable: 0, bare: 0 };
    const perRound: string[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const durable = await cpuMs(turns, () => durableTurns(engine, config, turns));
      const grouped = await cpuMs(GROUPED * 4, () => groupedTurns(engine, config, GROUPED * 4, GROUPED));
      const undurable = await cpuMs(turns, () => undurableTurns(models, config, turns));
      const bare = await cpuMs(turns, () => bareTurns(server.port, turns));
      total.durable += durable / rounds;
      total.grouped += grouped / rounds;
      total.undurable += undurable / rounds;
      total.bare += bare / rounds;
      perRound.push((durable / undurable).toFixed(2));
    }
    report({
      measure: 'turn_cpu_vs_undurable_loop',
      unit: 'ms of client CPU per turn (all threads)',
      value: total.durable,
      baseline:
        'the same turn by an undurable loop: ModelExecutor streaming both requests, the tool called directly, no log',
      baselineValue: total.undurable,
      goal: '<= 1.5',
      note: `Engine + EventLog on a SQLite file; model server in a child process; ${turns} turns a round, rounds ${perRound.join(', ')}`,
    });
    report({
      measure: 'turn_cpu_alone_vs_grouped',
      unit: 'ms of client CPU per turn (all threads)',
      value: total.durable,
      baseline: `the same durable turn with ${GROUPED} sessions at once, whose commits group (four turns each)`,
      baselineValue: total.grouped,
      note: 'what a turn pays for committing alone: its three commits (dispatch, settlement, end) each a transaction and an fsync of its own',
    });
    report({
      measure: 'turn_cpu_bare_exchanges',
      unit: 'ms of client CPU per turn (all threads)',
      value: total.undurable,
      baseline: 'the two bare HTTP exchanges of a turn (node:http, keep-alive, bytes read, nothing parsed)',
      baselineValue: total.bare,
    });
  } finally {
    await engine.close();
    await log.close();
    server.child.send('close');
    rmSync(root, { recursive: true, force: true });
  }
}
