// replay_verify: replaying a 1,000-turn session in `verify` mode ÷ reading its facts, in
// the same run. The session is recorded by the engine itself (each turn: a tool call,
// its result, an answer), so the replay goes through every step without a divergence.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import type { ModelExecutor } from '@factum/model';
import type { ScriptedProvider } from '@factum/model/testing';
import { ToolCatalog, ToolHandler } from '@factum/tools';
import { report } from '../../../tooling/bench/harness.ts';
import { Engine, type ReplayReport } from '../src/index.ts';

const turns = Number(process.env.FACTUM_BENCH_REPLAY_TURNS ?? 1000);
const bounds = { maxEvents: 1_000_000, maxBytes: 1024 * 1024 * 1024 };

export async function replayVerify(
  provider: ScriptedProvider,
  models: ModelExecutor,
  code: CodeExecutor,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'factum-replay-bench-'));
  try {
    const log = await EventLog.open(join(dir, 'events.sqlite'));
    const engine = new Engine({ log, models, code, options: { lease: false, recoverOnStart: false } });
    const recordingStarted = performance.now();
    const { replay } = await recordLongSession(engine, log, provider, turns);
    const recordingMs = performance.now() - recordingStarted;
    const read = () => log.scopedPrefix({ session: 'long' }, bounds);
    const first = await replay();
    if (first.summary.same !== turns)
      throw new Error(`the replay diverged: ${JSON.stringify(first.summary)}`);
    await read();
    let replayMs = 0;
    let readMs = 0;
    const rounds = Number(process.env.FACTUM_BENCH_REPLAY_ROUNDS ?? 3);
    for (let round = 0; round < rounds; round += 1) {
      let started = performance.now();
      await read();
      readMs += performance.now() - started;
      started = performance.now();
      await replay();
      replayMs += performance.now() - started;
    }
    const facts = (await read()).events.length;
    await engine.close();
    await log.close();
    report({
      measure: 'replay_verify',
      unit: `ms per replay of a ${turns}-turn session (${facts} facts)`,
      value: replayMs / rounds,
      baseline: 'reading the session’s facts (scopedPrefix)',
      baselineValue: readMs / rounds,
      goal: '<= 3',
    });
    // Each step's prompt carries the whole history before it, for the replay as for the
    // recorded run: both grow with the square of the session's length.
    report({
      measure: 'replay_verify_vs_recording',
      unit: `ms per replay of a ${turns}-turn session`,
      value: replayMs / rounds,
      baseline: 'recording the same session through the engine (scripted model on loopback, SQLite)',
      baselineValue: recordingMs,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Records a `turns`-turn session "long" through `engine` (each turn a lookup call, its
 * result and an answer) and gives back a verify replay of it.
 */
export async function recordLongSession(
  engine: Engine,
  log: EventLog,
  provider: ScriptedProvider,
  turns: number,
): Promise<{ replay: () => Promise<ReplayReport> }> {
  const catalog = new ToolCatalog([
    {
      definition: { name: 'lookup', description: 'looks a value up', inputSchema: { type: 'object' } },
      handler: ToolHandler.immediate({
        names: () => ['lookup'],
        invoke: async (_, input) => ({ found: input }),
      }),
      nesting: 'nestable',
      semantics: 'parallel',
    },
  ]);
  const config = provider.config({ model: 'bench', auth: { none: true } });
  const instructions = 'You answer from lookups.';
  for (let n = 0; n < turns; n += 1) {
    provider.script(
      { toolCalls: [{ id: 'call-1', name: 'lookup', arguments: { key: n } }], finishReason: 'tool_calls' },
      { text: `answer ${n}`, finishReason: 'stop' },
    );
    await engine.run({
      invocation: { sessionId: 'long', turnId: `t${n}`, runId: `r${n}`, invocationId: `i${n}` },
      provider: config,
      configuration: { cwd: '/', toolMode: 'direct' },
      instructions,
      work: { kind: 'message', message: `question ${n}`, tools: catalog },
    });
  }
  const agent = { provider: config, catalog, instructions };
  return {
    replay: () =>
      engine.replay(log, { target: { kind: 'session', sessionId: 'long' }, mode: 'verify', agent }),
  };
}
