import { getEventListeners } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { ToolCatalog } from '@factum/tools';
import { describe, expect, it } from 'vitest';
import { McpToolSource } from '../src/index.ts';
import { invocation, runOver, seed, temporaryDirectory, wide } from './support/log-fixtures.ts';
import { keyed } from './support/servers.ts';

const lines = (path: string) =>
  existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];

describe('a server built with the SDK', () => {
  it('receives the idempotency key and the attempt in the request _meta', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    await using source = await McpToolSource.connect(keyed(dir.path));
    const call = { id: 'c1', name: 'charge', input: { amount: 5 } };
    await seed(log, invocation, [call]);
    const run = runOver(log, source, new CodeExecutor());
    const result = await (await run.capture('.')).intoStep('step').invoke(call);
    await run.shutdown();
    const [request] = lines(join(dir.path, 'requests')).map((line) => JSON.parse(line));
    expect(request).toEqual({
      tool: 'charge',
      key: expect.stringMatching(/^factum-[0-9a-f]{32}$/),
      attempt: 1,
    });
    expect(result.json()).toMatchObject({ structuredContent: { charge: 1, key: request.key } });
  }, 60_000);

  it('calls under one long-lived run signal leave no listener on it', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    await using source = await McpToolSource.connect(keyed(dir.path));
    const calls = [1, 2, 3, 4, 5].map((n) => ({ id: `c${n}`, name: 'charge', input: { amount: n } }));
    await seed(log, invocation, calls);
    const run = runOver(log, source, new CodeExecutor());
    const step = (await run.capture('.')).intoStep('step');
    const signal = new AbortController().signal;
    for (const call of calls) await step.invoke(call, signal);
    await run.shutdown();
    expect(lines(join(dir.path, 'requests'))).toHaveLength(5);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  }, 60_000);

  it('a server that lists a changed tool set changes the catalog fingerprint; the same set keeps it', async () => {
    using dir = temporaryDirectory();
    const fingerprint = async (flags: string[], recovery?: Record<string, 'never_auto_retry'>) => {
      await using source = await McpToolSource.connect({
        ...keyed(dir.path, flags),
        ...(recovery ? { recovery } : {}),
      });
      return new ToolCatalog(source.registrations()).fingerprint();
    };
    const first = await fingerprint([]);
    expect(await fingerprint([])).toBe(first);
    expect(await fingerprint(['--extra'])).not.toBe(first);
    expect(await fingerprint([], { charge: 'never_auto_retry' })).not.toBe(first);
  }, 60_000);

  it('the run’s cancellation reaches the server as an MCP cancellation; the call stays uncertain', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    await using source = await McpToolSource.connect(keyed(dir.path));
    const call = { id: 'c1', name: 'slow-charge', input: { amount: 5 } };
    await seed(log, invocation, [call]);
    const run = runOver(log, source, new CodeExecutor());
    const controller = new AbortController();
    const watch = setInterval(() => {
      if (lines(join(dir.path, 'requests')).length > 0) controller.abort();
    }, 20);
    const error = await (await run.capture('.'))
      .intoStep('step')
      .invoke(call, controller.signal)
      .catch((e: unknown) => e);
    clearInterval(watch);
    await run.shutdown();
    expect(error).toMatchObject({ code: 'outcome_unknown' });
    const [request] = lines(join(dir.path, 'requests')).map((line) => JSON.parse(line));
    await expect
      .poll(() => lines(join(dir.path, 'cancellations')), { timeout: 10_000 })
      .toEqual([request.key]);
    expect((await log.invocationRecovery(invocation, wide)).uncertainOperations).toEqual(['step:c1']);
  }, 60_000);

  it('a call with neither an answer nor progress within callTimeoutMs is cancelled and left uncertain', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    await using source = await McpToolSource.connect(keyed(dir.path), { callTimeoutMs: 300 });
    const call = { id: 'c1', name: 'slow-charge', input: { amount: 5 } };
    await seed(log, invocation, [call]);
    const run = runOver(log, source, new CodeExecutor());
    const error = await (await run.capture('.'))
      .intoStep('step')
      .invoke(call)
      .catch((e: unknown) => e);
    await run.shutdown();
    expect(error).toMatchObject({
      code: 'outcome_unknown',
      message: expect.stringMatching(/neither answered/),
    });
    await expect.poll(() => lines(join(dir.path, 'cancellations')), { timeout: 10_000 }).toHaveLength(1);
    expect((await log.invocationRecovery(invocation, wide)).uncertainOperations).toEqual(['step:c1']);
  }, 60_000);
});
