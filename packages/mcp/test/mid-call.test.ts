import { ToolError } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog, recoverInvocations } from '@factum/event-log';
import { reconcileUncertain, ToolCatalog } from '@factum/tools';
import { describe, expect, it } from 'vitest';
import { McpToolSource } from '../src/index.ts';
import {
  factsOf,
  invocation,
  runOver,
  seed,
  temporaryDirectory,
  WatchingSink,
  wide,
} from './support/log-fixtures.ts';
import { everything } from './support/servers.ts';

const code = new CodeExecutor();
const LONG = 'trigger-long-running-operation';
// 30 steps of 0.1 s: long enough to act after the first progress, short enough to re-run.
const call = { id: 'long', name: LONG, input: { duration: 3, steps: 30 } };

/** Runs the long call; `onFirstProgress` acts once its first notification is durable. */
async function longCall(log: EventLog, source: McpToolSource, onFirstProgress: (abort: () => void) => void) {
  await seed(log, invocation, [call]);
  const controller = new AbortController();
  let seen = false;
  const sink = new WatchingSink(log, (fact) => {
    if (fact.kind === 'tool_notified' && !seen) {
      seen = true;
      onFirstProgress(() => controller.abort());
    }
  });
  const run = runOver(sink, source, code);
  const error = await (await run.capture('.'))
    .intoStep('step')
    .invoke(call, controller.signal)
    .catch((e: unknown) => e);
  await run.shutdown();
  return error;
}

describe('an MCP call interrupted mid-call', () => {
  it('a cancelled read-only call sends MCP cancellation and settles as cancelled', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    await using source = await McpToolSource.connect(everything());
    const error = await longCall(log, source, (abort) => abort());
    expect(ToolError.isInstance(error) && error.message).toMatch(
      /cancelled \(an MCP cancellation was sent\)/,
    );
    const facts = await factsOf(log, 'step:long');
    expect(facts.at(-1)).toMatchObject({
      kind: 'tool_settled',
      outcome: { kind: 'failed', error: { code: 'cancelled' } },
    });
    // The connection outlives the cancelled request: the next call works.
    expect(source.tools.length).toBeGreaterThan(0);
  }, 60_000);

  it('a cancelled call that may change the world stays uncertain: the server may have finished it', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    await using source = await McpToolSource.connect(
      everything({ recovery: { [LONG]: 'never_auto_retry' } }),
    );
    const error = await longCall(log, source, (abort) => abort());
    expect(ToolError.isInstance(error) && error.code).toBe('outcome_unknown');
    expect((await log.invocationRecovery(invocation, wide)).uncertainOperations).toEqual(['step:long']);
  }, 60_000);

  it('a server SIGKILLed mid-call leaves the operation uncertain; nothing re-runs it blindly; a read-only tool is reconciled by a recorded re-run', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    const dying = await McpToolSource.connect(everything());
    const error = await longCall(log, dying, () => process.kill(dying.pid!, 'SIGKILL'));
    await dying.close();
    expect(ToolError.isInstance(error) && error.code).toBe('outcome_unknown');
    const facts = await factsOf(log, 'step:long');
    expect(facts.map((fact) => fact.kind)).not.toContain('tool_settled');
    expect((await log.invocationRecovery(invocation, wide)).uncertainOperations).toEqual(['step:long']);

    await recoverInvocations(log);
    // Overridden to never re-run: it stays uncertain, nothing is sent.
    await using cautious = await McpToolSource.connect(
      everything({ recovery: { [LONG]: 'never_auto_retry' } }),
    );
    const left = await reconcileUncertain(log, invocation, {
      catalog: new ToolCatalog(cautious.registrations()),
    });
    expect(left).toEqual([expect.objectContaining({ decision: 'left_uncertain', attempt: 1 })]);
    expect((await factsOf(log, 'step:long')).map((fact) => fact.kind)).not.toContain('tool_redispatched');

    // Its annotations say read-only: the re-run is recorded as attempt 2, then settled.
    await using fresh = await McpToolSource.connect(everything());
    const outcomes = await reconcileUncertain(log, invocation, {
      catalog: new ToolCatalog(fresh.registrations()),
    });
    expect(outcomes).toEqual([expect.objectContaining({ decision: 'succeeded', attempt: 2 })]);
    const after = (await factsOf(log, 'step:long')).map((fact) => fact.kind);
    // Every progress note of the re-run is recorded, the last ones before the answer too.
    expect(after.slice(after.indexOf('tool_redispatched'))).toEqual([
      'tool_redispatched',
      ...Array(30).fill('tool_notified'),
      'tool_reconciled',
    ]);
  }, 90_000);
});
