// The cost of a durable turn: how many commits a sequential one-tool turn waits for
// (`fsyncs_per_turn`), what the durable log adds to a turn above the two bare model
// requests compared with a log in memory (`turn_overhead`), the same with the log's file
// where no disk is behind it (`turn_overhead_tmpfs`), and 32 sessions running turns at
// once (`concurrent_sessions_32`), each against a baseline of the same run.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CodeExecutor } from '@factum/code-runtime';
import { Engine, type EngineOptions } from '@factum/engine';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { type ScriptedProvider, startScriptedProvider } from '@factum/model/testing';
import { ToolCatalog, ToolHandler } from '@factum/tools';
import { diskSyncMs, percentile, report } from '../../../tooling/bench/harness.ts';

const toolCall = {
  toolCalls: [{ id: 'call-1', name: 'noop', arguments: '{}' }],
  finishReason: 'tool_calls',
} as const;
const answer = { text: ['all ', 'done'], finishReason: 'stop' } as const;
const catalog = new ToolCatalog([
  {
    definition: { name: 'noop', description: 'does nothing', inputSchema: { type: 'object' } },
    handler: ToolHandler.immediate({ names: () => ['noop'], invoke: async () => ({ ok: true }) }),
    nesting: 'nestable',
    semantics: 'parallel',
  },
]);
const models = new ModelExecutor({ timeoutMs: 10_000 });
const code = new CodeExecutor();
let runs = 0;

/** One sequential turn: a step with one tool call, then a step that answers. */
async function turn(engine: Engine, provider: ScriptedProvider, session: string): Promise<number> {
  runs += 1;
  provider.script(toolCall, answer);
  const started = performance.now();
  const result = await engine.run({
    invocation: { sessionId: session, turnId: `t${runs}`, runId: `r${runs}`, invocationId: `i${runs}` },
    provider: provider.config(),
    configuration: { cwd: '/', toolMode: 'direct' },
    work: { kind: 'message', message: 'go', tools: catalog },
  });
  if (result.outcome.kind !== 'completed') throw new Error(`a bench turn ended ${result.outcome.kind}`);
  return performance.now() - started;
}

/** The two model requests of a turn, with nothing around them. */
async function bareRequests(provider: ScriptedProvider): Promise<number> {
  provider.script(toolCall, answer);
  const started = performance.now();
  const tools = [{ name: 'noop', description: 'does nothing', inputSchema: { type: 'object' } }];
  for (let step = 0; step < 2; step += 1) {
    const stream = models.stream(
      { messages: [{ role: 'user', content: 'go' }], tools },
      {
        provider: provider.config(),
      },
    );
    for await (const _ of stream);
    await stream.step();
  }
  return performance.now() - started;
}

type Counted = { log: EventLog; commits: () => number; commitMs: () => number };

/** A log, its count of durable commits (each waited for its WAL flush) and their time. */
async function openCounted(target: string): Promise<Counted> {
  const log = await EventLog.open(target);
  return { log, commits: () => log.stats().commits, commitMs: () => log.stats().commitMs };
}

/** Turns in sessions of ten (a session's history grows as it does in use). */
async function sequential(
  counted: Counted,
  provider: ScriptedProvider,
  turns: number,
  options: EngineOptions = {},
): Promise<{ ms: number; commits: number; commitMs: number }> {
  const engine = new Engine({ log: counted.log, models, code, options });
  const before = { commits: counted.commits(), commitMs: counted.commitMs() };
  let ms = 0;
  for (let n = 0; n < turns; n += 1) ms += await turn(engine, provider, `s${runs - (runs % 10)}`);
  await engine.close();
  return {
    ms: ms / turns,
    commits: (counted.commits() - before.commits) / turns,
    commitMs: (counted.commitMs() - before.commitMs) / turns,
  };
}

/** 32 sessions, each running its turns one after another, all at once. */
async function concurrent(
  counted: Counted,
  providers: readonly ScriptedProvider[],
  turns: number,
  options: EngineOptions = {},
): Promise<{ perSecond: number; p99: number }> {
  const engine = new Engine({ log: counted.log, models, code, options });
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    providers.map(async (provider, index) => {
      const session = `c${runs}-${index}`;
      for (let n = 0; n < turns; n += 1) latencies.push(await turn(engine, provider, session));
    }),
  );
  const perSecond = latencies.length / ((performance.now() - started) / 1000);
  await engine.close();
  return { perSecond, p99: percentile(latencies, 0.99) };
}

/** `tmpfs`: the same log file where no disk is behind it, when the machine has one. */
type Sides = {
  file: Counted;
  memory: Counted;
  liveFile: Counted;
  tmpfs: Counted | undefined;
  provider: ScriptedProvider;
};

/** Sums over alternating rounds of 20 turns on each side, with each round's own ratio. */
type Rounds = {
  rounds: number;
  file: number;
  memory: number;
  tmpfs: number;
  bare: number;
  commits: number;
  liveCommits: number;
  liveMs: number;
  fileCommitMs: number;
  memoryCommitMs: number;
  perRound: number[];
};

/** Alternating rounds, so that machine noise hits every side alike. */
async function measureRounds(sides: Sides, rounds: number): Promise<Rounds> {
  const { file, memory, liveFile, tmpfs, provider } = sides;
  const totals: Rounds = {
    rounds,
    file: 0,
    memory: 0,
    tmpfs: 0,
    bare: 0,
    commits: 0,
    liveCommits: 0,
    liveMs: 0,
    fileCommitMs: 0,
    memoryCommitMs: 0,
    perRound: [],
  };
  for (let round = 0; round < rounds; round += 1) {
    const onFile = await sequential(file, provider, 20);
    totals.file += onFile.ms;
    totals.commits += onFile.commits;
    totals.fileCommitMs += onFile.commitMs;
    if (tmpfs !== undefined) totals.tmpfs += (await sequential(tmpfs, provider, 20)).ms;
    const inMemory = await sequential(memory, provider, 20);
    totals.memory += inMemory.ms;
    totals.memoryCommitMs += inMemory.commitMs;
    let bare = 0;
    for (let n = 0; n < 20; n += 1) bare += await bareRequests(provider);
    totals.bare += bare / 20;
    totals.perRound.push((onFile.ms - bare / 20) / (inMemory.ms - bare / 20));
    const old = await sequential(liveFile, provider, 20, { liveModelFacts: true });
    totals.liveCommits += old.commits;
    totals.liveMs += old.ms;
  }
  return totals;
}

/** A turn's overhead above its bare requests, file ÷ memory, over all rounds. */
function overheadRatio(totals: Rounds): number {
  const bare = totals.bare;
  return (totals.file - bare) / (totals.memory - bare);
}

/** Where the difference goes: the log's commits, and everything else in the turn. */
function describe(totals: Rounds): string {
  const mean = (total: number) => total / totals.rounds;
  const bare = mean(totals.bare);
  const rounds = totals.perRound.map((ratio) => ratio.toFixed(2)).join(', ');
  return `turn ${mean(totals.file).toFixed(2)} ms on file, ${mean(totals.memory).toFixed(2)} ms in memory, two bare requests ${bare.toFixed(2)} ms; commits ${mean(totals.fileCommitMs).toFixed(2)} ms on file, ${mean(totals.memoryCommitMs).toFixed(2)} ms in memory, the rest of the turn ${(mean(totals.file - totals.fileCommitMs) - bare).toFixed(2)} and ${(mean(totals.memory - totals.memoryCommitMs) - bare).toFixed(2)} ms; rounds ${rounds} (median ${percentile(totals.perRound, 0.5).toFixed(2)}); with liveModelFacts on file ${mean(totals.liveMs).toFixed(2)} ms (overhead ratio ${((mean(totals.liveMs) - bare) / (mean(totals.memory) - bare)).toFixed(2)})`;
}

/** Reports `fsyncs_per_turn`, `turn_overhead` and the 32-session figures. */
export async function turnShape(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'factum-turn-bench-'));
  // The same file with no disk behind it: what remains of the file's extra is our code's.
  const tmpfsRoot = existsSync('/dev/shm') ? mkdtempSync('/dev/shm/factum-turn-bench-') : undefined;
  const provider = await startScriptedProvider();
  const providers = await Promise.all(Array.from({ length: 32 }, () => startScriptedProvider()));
  try {
    const file = await openCounted(join(root, 'turns.sqlite'));
    // The liveModelFacts baseline writes three times the WAL of a turn: on its own file,
    // its checkpoints are not paid for by the rounds measured on the other.
    const liveFile = await openCounted(join(root, 'turns-live.sqlite'));
    const memory = await openCounted(':memory:');
    const tmpfs = tmpfsRoot === undefined ? undefined : await openCounted(join(tmpfsRoot, 'turns.sqlite'));
    const live = { liveModelFacts: true };
    const sides: Sides = { file, memory, liveFile, tmpfs, provider };
    // A new file's WAL grows until its first checkpoint (about 1,000 frames, 30 turns),
    // and while it grows every fsync also writes the file's size: the first warm-up takes
    // the file past that (see the README for the first 30).
    await sequential(file, provider, 60);
    await sequential(liveFile, provider, 10, live);
    await sequential(memory, provider, 60);
    if (tmpfs !== undefined) await sequential(tmpfs, provider, 60);
    await bareRequests(provider);
    // Eight rounds: within a run, one round's ratio can sit anywhere from 1.0 to 2.1.
    // After 60 turns the JIT is still compiling on its helper threads (2 ms of their CPU
    // per turn, on a 2-core machine): that is how the figure was first measured, and it
    // is printed for comparison with those figures.
    const warming = await measureRounds(sides, 8);
    // The steady state, the one a long-lived process turns in: after 600 turns on each
    // log the helpers are idle, and a turn in memory costs a third less.
    await sequential(file, provider, 600);
    await sequential(memory, provider, 600);
    if (tmpfs !== undefined) await sequential(tmpfs, provider, 600);
    const steady = await measureRounds(sides, 8);
    const mean = (total: number) => total / steady.rounds;
    report({
      measure: 'fsyncs_per_turn',
      unit: 'waited-for commits (one fsync each) per sequential turn with one tool call',
      value: mean(steady.commits),
      baseline: 'the same turn with liveModelFacts (each model fact committed as it happens)',
      baselineValue: mean(steady.liveCommits),
      valueGoal: '<= 4',
    });
    const bare = mean(steady.bare);
    const inMemory = {
      baseline: 'the same turn on a :memory: log, same run',
      baselineValue: mean(steady.memory) - bare,
    };
    report({
      measure: 'turn_overhead',
      unit: 'ms per sequential one-tool turn above its two bare model requests, JIT warmed (after 600 turns)',
      value: mean(steady.file) - bare,
      ...inMemory,
      goal: '<= 1.5',
      note: `${describe(steady)}; disk: 4 KiB write + fdatasync ${diskSyncMs(root)} ms (median). After 60 turns (the JIT still compiling): ratio ${overheadRatio(warming).toFixed(3)}; ${describe(warming)}`,
    });
    if (tmpfs !== undefined) {
      report({
        measure: 'turn_overhead_tmpfs',
        unit: 'ms per sequential one-tool turn above its two bare model requests, the log file on tmpfs, JIT warmed',
        value: mean(steady.tmpfs) - bare,
        ...inMemory,
        note: 'the same file, statements and fsync calls as turn_overhead with no disk behind them: the file path of the log and the engine; what turn_overhead has above this is the disk',
      });
    }

    await concurrent(file, providers, 2);
    await concurrent(liveFile, providers, 2, live);
    const now = { perSecond: 0, p99: 0 };
    const before = { perSecond: 0, p99: 0 };
    for (let round = 0; round < 3; round += 1) {
      const ride = await concurrent(file, providers, 10);
      const old = await concurrent(liveFile, providers, 10, live);
      now.perSecond += ride.perSecond / 3;
      now.p99 += ride.p99 / 3;
      before.perSecond += old.perSecond / 3;
      before.p99 += old.p99 / 3;
    }
    report({
      measure: 'concurrent_sessions_32_turns_per_second',
      unit: 'one-tool turns per second, 32 sessions at once on one SQLite file',
      value: now.perSecond,
      baseline: 'the same with liveModelFacts (each model fact committed as it happens)',
      baselineValue: before.perSecond,
      note: `p99 turn latency ${now.p99.toFixed(1)} ms (baseline ${before.p99.toFixed(1)} ms)`,
    });
    report({
      measure: 'concurrent_sessions_32_p99_ms',
      unit: 'p99 ms per one-tool turn, 32 sessions at once on one SQLite file',
      value: now.p99,
      baseline: 'the same with liveModelFacts (each model fact committed as it happens)',
      baselineValue: before.p99,
    });
    await file.log.close();
    await liveFile.log.close();
    await memory.log.close();
    await tmpfs?.log.close();
  } finally {
    if (tmpfsRoot !== undefined) rmSync(tmpfsRoot, { recursive: true, force: true });
    await provider.close();
    await Promise.all(providers.map((one) => one.close()));
    rmSync(root, { recursive: true, force: true });
  }
}
