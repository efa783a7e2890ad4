// approval_round_trip: a call that waits for a person — request → park → decide →
// continue → effect — against the same call made plainly, in the same run, on one SQLite
// log. Reports the durable commits the approval adds per call (counted by the log's
// afterCommit hook: one per transaction) and, as a second line, the time ratio.
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

const rounds = 40;
const call = {
  toolCalls: [{ id: 'call-1', name: 'send', arguments: '{"to":"ops"}' }],
  finishReason: 'tool_calls',
} as const;
const answer = { text: 'sent', finishReason: 'stop' } as const;

function catalog(approval: boolean): ToolCatalog {
  return new ToolCatalog([
    {
      definition: { name: 'send', description: 'sends', inputSchema: { type: 'object' } },
      handler: ToolHandler.immediate({ names: () => ['send'], invoke: async () => ({ ok: true }) }),
      nesting: 'nestable',
      semantics: 'parallel',
      ...(approval ? { approval: 'always' as const } : {}),
    },
  ]);
}

type Measured = { ms: number; commits: number };

/** Reports `approval_round_trip`. */
export async function approvalRoundTrip(provider: ScriptedProvider): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'factum-approval-bench-'));
  let commits = 0;
  const log = await EventLog.open(join(root, 'approvals.sqlite'), {
    hooks: { afterCommit: () => (commits += 1) },
  });
  const engine = new Engine({
    log,
    models: new ModelExecutor({ timeoutMs: 10_000 }),
    code: new CodeExecutor(),
    options: { lease: false },
  });
  const plainTools = catalog(false);
  const approvalTools = catalog(true);
  const base = (sessionId: string, suffix: string) => ({
    invocation: {
      sessionId,
      turnId: `t${sessionId}-${suffix}`,
      runId: `r${sessionId}-${suffix}`,
      invocationId: `i${sessionId}-${suffix}`,
    },
    provider: provider.config(),
    configuration: { cwd: '/', toolMode: 'direct' as const },
  });
  let session = 0;
  const measure = async (work: (sessionId: string) => Promise<void>): Promise<Measured> => {
    session += 1;
    const before = commits;
    const started = performance.now();
    await work(`s${session}`);
    return { ms: performance.now() - started, commits: commits - before };
  };
  const plain = (sessionId: string) =>
    (async () => {
      provider.script(call, answer);
      await engine.run({
        ...base(sessionId, '1'),
        work: { kind: 'message', message: 'go', tools: plainTools },
      });
    })();
  const approved = (sessionId: string) =>
    (async () => {
      provider.script(call);
      const parked = await engine.run({
        ...base(sessionId, '1'),
        work: { kind: 'message', message: 'go', tools: approvalTools },
      });
      if (parked.outcome.kind !== 'approval_pending') throw new Error(`not parked: ${parked.outcome.kind}`);
      await engine.decide(parked.outcome.operations[0]!, { decision: 'approve', by: 'bench' });
      const view = await engine.parkedRun(sessionId);
      provider.script(answer);
      await engine.run({
        ...base(sessionId, '2'),
        work: { kind: 'continuation', source: view!.source, tools: approvalTools },
      });
    })();
  try {
    await plain('warm-plain');
    await approved('warm-approval');
    const totals = { plain: { ms: 0, commits: 0 }, approval: { ms: 0, commits: 0 } };
    for (let n = 0; n < rounds; n += 1) {
      const a = await measure(plain);
      const b = await measure(approved);
      totals.plain.ms += a.ms;
      totals.plain.commits += a.commits;
      totals.approval.ms += b.ms;
      totals.approval.commits += b.commits;
    }
    const plainCommits = totals.plain.commits / rounds;
    const approvalCommits = totals.approval.commits / rounds;
    report({
      measure: 'approval_round_trip',
      unit: 'durable commits added per approved call',
      value: approvalCommits - plainCommits,
      baseline: 'durable commits of the same turn with no approval (same log, alternating rounds)',
      baselineValue: plainCommits,
      valueGoal: '<= 2',
      note: `commits per turn: plain ${plainCommits}, approved (request, park, decide, continue) ${approvalCommits}`,
    });
    report({
      measure: 'approval_round_trip_time',
      unit: 'ms per turn, request → park → decide → continue → effect → answer',
      value: totals.approval.ms / rounds,
      baseline: 'the same call and answer with no approval',
      baselineValue: totals.plain.ms / rounds,
    });
  } finally {
    await engine.close();
    await log.close();
    rmSync(root, { recursive: true, force: true });
  }
}
