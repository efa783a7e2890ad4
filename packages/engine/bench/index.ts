// Engine benchmark: one JSON line per measure, against a baseline of the same run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventWrite, type Fact, type Invocation, RuntimeEvent, ToolResult } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { Engine } from '@factum/engine';
import { EventLog } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { ModelExecutor, type ModelRequest } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { ToolCatalog, ToolHandler } from '@factum/tools';
import { report } from '../../../tooling/bench/harness.ts';
import { acquireSharedPostgres } from '../../../tooling/test-postgres/shared-postgres.mjs';
import { approvalRoundTrip } from './approval-round-trip.ts';
import { failover } from './failover.ts';
import { fleet } from './fleet.ts';
import { forkBench } from './fork.ts';
import { leaseOverhead } from './lease-overhead.ts';
import { turnCpuLongSession } from './long-session.ts';
import { readOnlyTurn } from './read-only-turn.ts';
import { replayVerify } from './replay-verify.ts';
import { submissionRetry } from './submission-retry.ts';
import { turnCpu } from './turn-cpu.ts';
import { turnShape } from './turn-shape.ts';

const root = mkdtempSync(join(tmpdir(), 'factum-engine-bench-'));
const turns = 60;
const toolCall = {
  toolCalls: [{ id: 'call-1', name: 'noop', arguments: '{}' }],
  finishReason: 'tool_calls',
} as const;
const answer = { text: ['all ', 'done'], finishReason: 'stop' } as const;
const provider = await startScriptedProvider();
const models = new ModelExecutor({ timeoutMs: 10_000 });
const code = new CodeExecutor();
const catalog = new ToolCatalog([
  {
    definition: { name: 'noop', description: 'does nothing', inputSchema: { type: 'object' } },
    handler: ToolHandler.immediate({ names: () => ['noop'], invoke: async () => ({ ok: true }) }),
    nesting: 'nestable',
    semantics: 'parallel',
  },
]);
let sessions = 0;
const at = (_n: number, kind: string): Invocation => {
  sessions += 1;
  return { sessionId: `${kind}-${sessions}`, turnId: 't', runId: 'r', invocationId: 'i' };
};

async function throughEngine(log: EventLog): Promise<number> {
  const engine = new Engine({ log, models, code });
  const started = performance.now();
  for (let n = 0; n < turns; n += 1) {
    provider.script(toolCall, answer);
    await engine.run({
      invocation: at(n, 'engine'),
      provider: provider.config(),
      configuration: { cwd: '/', toolMode: 'direct' },
      work: { kind: 'message', message: 'go', tools: catalog },
    });
  }
  return (performance.now() - started) / (turns * 2);
}

/** The same two model requests and the same facts, written by hand with no engine around them. */
async function byHand(log: EventLog): Promise<number> {
  const config = provider.config();
  const started = performance.now();
  for (let n = 0; n < turns; n += 1) {
    provider.script(toolCall, answer);
    const where = at(n, 'hand');
    const append = (fact: Fact) => log.append(EventWrite.plain(RuntimeEvent.create(where, fact)));
    await append({
      kind: 'invocation_opened',
      input: { kind: 'message', content: 'go', sourceMessages: [] },
    });
    const messages: ModelRequest['messages'][number][] = [{ role: 'user', content: 'go' }];
    for (const stepId of ['s1', 's2']) {
      await append({
        kind: 'model_requested',
        stepId,
        modelId: 'test',
        purpose: 'main',
        source: { scope: { kind: 'session', id: where.sessionId }, highWater: 0, digest: 'x' },
        inputDigest: 'x',
        routeIdentity: 'x',
      });
      const tools = [{ name: 'noop', description: 'does nothing', inputSchema: { type: 'object' } }];
      const stream = models.stream({ messages, tools }, { provider: config });
      const observed: Promise<unknown>[] = [];
      for await (const observation of stream)
        observed.push(append({ kind: 'model_observed', stepId, observation }));
      await Promise.all(observed);
      const step = await stream.step();
      await append({ kind: 'model_completed', stepId, output: step });
      messages.push({ role: 'assistant', parts: step.parts });
      for (const part of step.parts) {
        if (part.kind !== 'tool_call') continue;
        const operationId = `${stepId}:${part.call.id}`;
        await append({
          kind: 'tool_dispatched',
          operationId,
          call: { ...part.call, origin: { kind: 'provider', stepId } },
        });
        const result = ToolResult.of({ ok: true });
        const settled = RuntimeEvent.create(where, {
          kind: 'tool_settled',
          operationId,
          outcome: { kind: 'succeeded', result: result.reference() },
        });
        await log.append(EventWrite.withResult(settled, result));
        messages.push({
          role: 'tool',
          callId: part.call.id,
          name: 'noop',
          result: { kind: 'text', text: result.text() },
        });
      }
    }
    await append({ kind: 'invocation_ended', outcome: { kind: 'completed' } });
  }
  return (performance.now() - started) / (turns * 2);
}

/** `FACTUM_BENCH_ONLY=pg_fleet` (a comma-separated list of measures' prefixes) runs only those. */
const only = process.env.FACTUM_BENCH_ONLY?.split(',');
const wanted = (measure: string) => only === undefined || only.some((prefix) => measure.startsWith(prefix));

try {
  if (wanted('engine_step_ms')) await engineStep();
  if (['fsyncs_per_turn', 'turn_overhead', 'concurrent_sessions'].some(wanted)) await turnShape();
  if (wanted('approval_round_trip')) await approvalRoundTrip(provider);
  if (wanted('read_only_turn')) await readOnlyTurn(provider);
  if (wanted('lease_overhead')) await leaseOverhead();
  if (wanted('turn_submission_retry')) await submissionRetry(provider);
  if (wanted('fork')) await forkBench();
  if (wanted('replay_verify')) await replayVerify(models, code);
  if (wanted('turn_cpu')) await turnCpu(models, code);
  if (wanted('turn_cpu_long_session')) await turnCpuLongSession(models, code);
  // Several hosts need PostgreSQL: FACTUM_TEST_POSTGRES_URL's server, as in the tests,
  // or else an embedded one with PostgreSQL's default durability (the tests' skips fsync).
  if (wanted('failover_ms') || wanted('pg_fleet')) {
    const server = process.env.FACTUM_TEST_POSTGRES_URL
      ? undefined
      : await acquireSharedPostgres({ durable: true });
    if (server !== undefined) process.env.FACTUM_TEST_POSTGRES_URL = server.url;
    try {
      const postgres = testStores().find((factory) => factory.name === 'postgres')!;
      if (wanted('failover_ms')) await failover(postgres);
      if (wanted('pg_fleet')) await fleet(postgres);
    } finally {
      server?.release();
    }
  }
} finally {
  await provider.close();
  await code.close();
  rmSync(root, { recursive: true, force: true });
}

async function engineStep(): Promise<void> {
  const log = await EventLog.open(join(root, 'engine.sqlite'));
  // Warm both paths, then alternate so that machine noise hits both alike.
  await byHand(log);
  await throughEngine(log);
  let engineTotal = 0;
  let handTotal = 0;
  for (let round = 0; round < 3; round += 1) {
    handTotal += await byHand(log);
    engineTotal += await throughEngine(log);
  }
  await log.close();
  report({
    measure: 'engine_step_ms',
    unit: 'ms per model step',
    value: engineTotal / 3,
    baseline: 'the same model requests and facts made by hand (no admission, projection or tools layer)',
    baselineValue: handTotal / 3,
    goal: '<= 1.3',
  });
}
