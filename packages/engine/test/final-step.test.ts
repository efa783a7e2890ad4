import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { Engine } from '../src/index.ts';
import { temporaryDirectory } from './support/agent-loop.ts';
import { approvalCatalog, approvalInput } from './support/approvals.ts';
import { agentOf, INSTRUCTIONS, Ledger } from './support/replay-log.ts';

describe('a step that asks for no tool ends the invocation by one rule, live and in a replay', () => {
  it('an answer cut by the output limit and a refusal end failed; a plain answer completes; verify replays all three', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    const catalog = approvalCatalog(new Ledger());
    await using log = await EventLog.open(dir.file);
    const engine = new Engine({
      log,
      models: new ModelExecutor({ timeoutMs: 5_000 }),
      code: new CodeExecutor(),
    });
    const config = provider.config({ model: 'test', auth: { apiKey: 'k' } });
    provider.script(
      { text: 'half an ans', finishReason: 'length' },
      { refusal: 'I will not do that' },
      { text: 'a whole answer' },
    );
    const outcomes = [];
    for (const suffix of ['cut', 'refused', 'whole']) {
      const outcome = await engine.run({
        ...approvalInput(config, suffix, catalog),
        instructions: INSTRUCTIONS,
      });
      outcomes.push(outcome.outcome);
    }
    expect(outcomes).toEqual([
      { kind: 'failed', error: { code: 'output_limit', message: 'the model reached its output limit' } },
      { kind: 'failed', error: { code: 'model_refused', message: 'the model refused: I will not do that' } },
      { kind: 'completed' },
    ]);
    const report = await engine.replay(log, {
      target: { kind: 'session', sessionId: 'session' },
      mode: 'verify',
      agent: agentOf(provider, catalog),
    });
    expect(report.summary).toEqual({ invocations: 3, same: 3, diverged: 0 });
  });
});
