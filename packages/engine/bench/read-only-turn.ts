// read_only_turn: a sequential turn whose one call is to a read-only tool (its T1 rides
// with its T2) against the same turn with the tool not declared read-only, in the same
// run, on one SQLite file, alternating rounds. Reports the durable commits each turn
// waits for (the log's afterCommit hook: one per transaction) and, as a second line, the
// turn's time.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CodeExecutor } from '@factum/code-runtime';
import { Engine } from '@factum/engine';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import type { ScriptedProvider } from '@factum/model/testing';
import { ToolCatalog, ToolHandler } from '@factum/tools';
import { report } from '../../../tooling/bench/harness.ts';

const rounds = 200;
const call = {
  toolCalls: [{ id: 'call-1', name: 'read', arguments: '{"path":"a"}' }],
  finishReason: 'tool_calls',
} as const;
const answer = { text: 'read', finishReason: 'stop' } as const;

function catalog(readOnly: boolean): ToolCatalog {
  return new ToolCatalog([
    {
      definition: { name: 'read', description: 'reads', inputSchema: { type: 'object' } },
      handler: ToolHandler.immediate({ names: () => ['read'], invoke: async () => ({ text: 'a' }) }),
      nesting: 'nestable',
      semantics: 'parallel',
      readOnly,
    },
  ]);
}

/** Reports `read_only_turn` and `read_only_turn_time`. */
export async function readOnlyTurn(provider: ScriptedProvider): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'factum-read-only-bench-'));
  let commits = 0;
  const log = await EventLog.open(join(root, 'reads.sqlite'), {
    hooks: { afterCommit: () => (commits += 1) },
  });
  const engine = new Engine({
    log,
    models: new ModelExecutor({ timeoutMs: 10_000 }),
    code: new CodeExecutor(),
  });
  const tools = { readOnly: catalog(true), plain: catalog(false) };
  let turns = 0;
  const turn = async (kind: keyof typeof tools) => {
    turns += 1;
    provider.script(call, answer);
    const before = commits;
    const started = performance.now();
    const result = await engine.run({
      // Sessions of ten turns of each kind, so a session's history grows as in use.
      invocation: {
        sessionId: `${kind}-${Math.floor(turns / 20)}`,
        turnId: `t${turns}`,
        runId: `r${turns}`,
        invocationId: `i${turns}`,
      },
      provider: provider.config(),
      configuration: { cwd: '/', toolMode: 'direct' },
      work: { kind: 'message', message: 'go', tools: tools[kind] },
    });
    if (result.outcome.kind !== 'completed') throw new Error(`a bench turn ended ${result.outcome.kind}`);
    return { ms: performance.now() - started, commits: commits - before };
  };
  try {
    // Past the new WAL's first checkpoint, and the JIT's first compiles.
    for (let n = 0; n < 100; n += 1) await turn(n % 2 === 0 ? 'readOnly' : 'plain');
    const totals = { readOnly: { ms: 0, commits: 0 }, plain: { ms: 0, commits: 0 } };
    for (let n = 0; n < rounds; n += 1) {
      for (const kind of n % 2 === 0 ? (['readOnly', 'plain'] as const) : (['plain', 'readOnly'] as const)) {
        const measured = await turn(kind);
        totals[kind].ms += measured.ms;
        totals[kind].commits += measured.commits;
      }
    }
    report({
      measure: 'read_only_turn',
      unit: 'waited-for commits (one fsync each) per sequential turn with one call to a read-only tool',
      value: totals.readOnly.commits / rounds,
      baseline: 'the same turn with the tool not declared read-only (same log, alternating turns)',
      baselineValue: totals.plain.commits / rounds,
      valueGoal: '<= 2',
    });
    report({
      measure: 'read_only_turn_time',
      unit: 'ms per sequential turn with one call to a read-only tool, on a SQLite file',
      value: totals.readOnly.ms / rounds,
      baseline: 'the same turn with the tool not declared read-only',
      baselineValue: totals.plain.ms / rounds,
    });
  } finally {
    await engine.close();
    await log.close();
    rmSync(root, { recursive: true, force: true });
  }
}
