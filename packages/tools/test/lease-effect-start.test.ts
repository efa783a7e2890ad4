import type { CommitReceipt, EventSink, EventWrite, RuntimeEvent } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunTools, ToolCatalog, ToolHandler } from '../src/index.ts';
import { invocation, seed, temporaryDirectory, wide } from './support/fixtures.ts';
import { RecordingTool } from './support/recording-tool.ts';

let dir: ReturnType<typeof temporaryDirectory>;
let log: EventLog;
const code = new CodeExecutor();
/** The host's own clock, which the test moves (a lease renews against it). */
let now = 0;

beforeEach(async () => {
  dir = temporaryDirectory();
  now = 0;
  log = await EventLog.open(dir.file);
  await log.holdLease({ ttlMs: 60_000, renewEveryMs: 20_000, clock: { now: () => now } });
});
afterEach(async () => {
  await log.close();
  dir[Symbol.dispose]();
});

/**
 * The log, reached through a network that holds the answer to a T1 until the host's
 * lease has lapsed: the T1 is durable, and its answer comes too late.
 */
class LateAnswers implements EventSink {
  constructor(readonly log: EventLog) {}

  async commit(write: EventWrite): Promise<CommitReceipt> {
    const receipt = await this.log.commit(write);
    if (write.event.fact.kind === 'tool_dispatched') now += 60_000;
    return receipt;
  }

  mayStartEffect(dispatch?: RuntimeEvent): boolean {
    return this.log.mayStartEffect(dispatch);
  }
}

function catalog(tool: RecordingTool) {
  return new ToolCatalog([
    {
      definition: { name: 'echo', description: 'echo tool', inputSchema: { type: 'object' } },
      handler: ToolHandler.immediate(tool),
      nesting: 'nestable' as const,
      semantics: 'parallel' as const,
    },
  ]);
}

describe('an effect starts only under a live lease', () => {
  it('a T1 whose answer came after the lease lapsed starts no effect: the call fails as persistence and stays uncertain', async () => {
    const tool = new RecordingTool(log, 'echo');
    await seed(log, invocation, [{ id: 'c1', name: 'echo', input: { value: 1 } }]);
    const run = new RunTools({
      sink: new LateAnswers(log),
      invocation,
      catalog: catalog(tool),
      mode: 'direct',
      code,
    });
    const step = (await run.capture('.')).intoStep('step');
    await expect(step.invoke({ id: 'c1', name: 'echo', input: { value: 1 } })).rejects.toMatchObject({
      code: 'persistence',
    });
    expect(tool.calls, 'the effect never started').toEqual([]);
    await expect(run.shutdown()).rejects.toMatchObject({ code: 'persistence' });
    const recovery = await log.invocationRecovery(invocation, wide);
    expect(recovery.uncertainOperations).toEqual(['step:c1']);
  });

  it('while the lease is live after the T1, the effect starts as before', async () => {
    const tool = new RecordingTool(log, 'echo');
    await seed(log, invocation, [{ id: 'c1', name: 'echo', input: { value: 1 } }]);
    const run = new RunTools({ sink: log, invocation, catalog: catalog(tool), mode: 'direct', code });
    const step = (await run.capture('.')).intoStep('step');
    const result = await step.invoke({ id: 'c1', name: 'echo', input: { value: 1 } });
    expect(result.json()).toEqual({ echoed: { value: 1 } });
    expect(tool.calls).toHaveLength(1);
    await run.shutdown();
  });
});
