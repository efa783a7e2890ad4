// turn_submission_retry: a retried submission of a finished turn (the same idempotency
// key again, through `engine.run`) against reading that invocation's end from the log
// (`invocationEvents`), in the same run, on one SQLite log. A second line counts the model
// requests the retries made: the retry must ask no model.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CodeExecutor } from '@factum/code-runtime';
import { Engine, type RunInput } from '@factum/engine';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import type { ScriptedProvider } from '@factum/model/testing';
import { ToolCatalog, ToolHandler } from '@factum/tools';
import { report } from '../../../tooling/bench/harness.ts';

const turns = 20;
const retries = 50;
const bounds = { maxEvents: 10_000, maxBytes: 16 * 1024 * 1024 };

/** Reports `turn_submission_retry` and `turn_submission_retry_model_requests`. */
export async function submissionRetry(provider: ScriptedProvider): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'factum-retry-bench-'));
  const log = await EventLog.open(join(root, 'retry.sqlite'));
  const engine = new Engine({
    log,
    models: new ModelExecutor({ timeoutMs: 10_000 }),
    code: new CodeExecutor(),
    options: { lease: false },
  });
  const tools = new ToolCatalog([
    {
      definition: { name: 'noop', description: 'does nothing', inputSchema: { type: 'object' } },
      handler: ToolHandler.immediate({ names: () => ['noop'], invoke: async () => ({ ok: true }) }),
      nesting: 'nestable',
      semantics: 'parallel',
    },
  ]);
  const input = (turn: number, attempt: number): RunInput => ({
    invocation: {
      sessionId: `s${turn}`,
      turnId: `t${turn}-${attempt}`,
      runId: `r${turn}-${attempt}`,
      invocationId: `i${turn}-${attempt}`,
    },
    provider: provider.config(),
    configuration: { cwd: '/', toolMode: 'direct' },
    work: { kind: 'message', message: 'send the invoice to Bob', tools },
  });
  try {
    const finished = [];
    for (let turn = 0; turn < turns; turn += 1) {
      provider.script(
        { toolCalls: [{ id: 'call-1', name: 'noop', arguments: '{}' }], finishReason: 'tool_calls' },
        { text: 'sent', finishReason: 'stop' },
      );
      finished.push(await engine.run(input(turn, 0), { idempotencyKey: `key-${turn}` }));
    }
    const requestsBefore = provider.requests.length;
    let retryMs = 0;
    let readMs = 0;
    // Alternate, so that machine noise hits both alike; the first pass warms both paths.
    for (let pass = 0; pass <= retries; pass += 1) {
      const turn = pass % turns;
      let started = performance.now();
      const events = await log.invocationEvents(finished[turn]!.invocation, bounds);
      if (events.at(-1)?.event.fact.kind !== 'invocation_ended') throw new Error('the turn has not ended');
      const read = performance.now() - started;
      started = performance.now();
      const outcome = await engine.run(input(turn, pass + 1), { idempotencyKey: `key-${turn}` });
      const retry = performance.now() - started;
      if (outcome.invocation.invocationId !== finished[turn]!.invocation.invocationId) {
        throw new Error('the retry started another run');
      }
      if (pass === 0) continue;
      readMs += read;
      retryMs += retry;
    }
    const requests = provider.requests.length - requestsBefore;
    report({
      measure: 'turn_submission_retry',
      unit: 'ms per retried submission of a finished turn (same idempotency key, engine.run)',
      value: retryMs / retries,
      baseline: "reading that invocation's end from the log (invocationEvents), same run",
      baselineValue: readMs / retries,
      goal: '<= 1.5',
      note: `model requests made by ${retries} retries: ${requests}`,
    });
    report({
      measure: 'turn_submission_retry_model_requests',
      unit: `model requests made by ${retries} retried submissions`,
      value: requests,
      baseline: 'model requests of the first submissions (two steps each)',
      baselineValue: requestsBefore,
      valueGoal: '<= 0',
    });
  } finally {
    await engine.close();
    await log.close();
    rmSync(root, { recursive: true, force: true });
  }
}
