// replay_verify: replaying a 1,000-turn session in `verify` mode ÷ reading its facts, in
// the same run, three rounds after a warm one. The session is recorded by the engine
// itself (each turn: a tool call, its result, an answer), so the replay goes through every
// step without a divergence. Like every engine measure it runs the built packages, as
// users do (from source, the loader's name-keeping helpers cost a tenth more).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CodeExecutor } from '@factum/code-runtime';
import { Engine, type ReplayReport } from '@factum/engine';
import { EventLog } from '@factum/event-log';
import type { ModelExecutor } from '@factum/model';
import { ToolCatalog, ToolHandler } from '@factum/tools';
import { report } from '../../../tooling/bench/harness.ts';
import { configOf, startServer } from './turn-cpu.ts';

const turns = Number(process.env.FACTUM_BENCH_REPLAY_TURNS ?? 1000);
const bounds = { maxEvents: 1_000_000, maxBytes: 1024 * 1024 * 1024 };

export async function replayVerify(models: ModelExecutor, code: CodeExecutor): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'factum-replay-bench-'));
  try {
    const log = await EventLog.open(join(dir, 'events.sqlite'));
    const engine = new Engine({ log, models, code, options: { lease: false, recoverOnStart: false } });
    const recordingStarted = performance.now();
    const { replay } = await recordLongSession(engine, log, turns);
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
    // What the replay saves over running the session again: every model exchange and commit.
    report({
      measure: 'replay_verify_vs_recording',
      unit: `ms per replay of a ${turns}-turn session`,
      value: replayMs / rounds,
      baseline: 'recording the same session through the engine (model server in a child process, SQLite)',
      baselineValue: recordingMs,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Records a `turns`-turn session "long" through `engine` (each turn a call of a no-op
 * tool, its result and an answer) and gives back a verify replay of it. The model is the
 * turn benchmark's server, in a child process stopped after the recording: a replay runs
 * in a process with nothing beside it but the log (an in-process scripted provider keeps
 * every request it answered — here most of a gigabyte of a growing conversation).
 */
export async function recordLongSession(
  engine: Engine,
  log: EventLog,
  turns: number,
): Promise<{ replay: () => Promise<ReplayReport> }> {
  const catalog = new ToolCatalog([
    {
      definition: { name: 'noop', description: 'does nothing', inputSchema: { type: 'object' } },
      handler: ToolHandler.immediate({ names: () => ['noop'], invoke: async () => ({ ok: true }) }),
      nesting: 'nestable',
      semantics: 'parallel',
    },
  ]);
  const server = await startServer();
  const provider = configOf(server);
  const instructions = 'You answer after a no-op.';
  try {
    for (let n = 0; n < turns; n += 1) {
      await engine.run({
        invocation: { sessionId: 'long', turnId: `t${n}`, runId: `r${n}`, invocationId: `i${n}` },
        provider,
        configuration: { cwd: '/', toolMode: 'direct' },
        instructions,
        work: { kind: 'message', message: `question ${n}`, tools: catalog },
      });
    }
  } finally {
    server.child.send('close');
  }
  const agent = { provider, catalog, instructions };
  return {
    replay: () =>
      engine.replay(log, { target: { kind: 'session', sessionId: 'long' }, mode: 'verify', agent }),
  };
}
