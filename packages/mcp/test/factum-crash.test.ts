import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventLog, recoverInvocations } from '@factum/event-log';
import { reconcileUncertain, ToolCatalog } from '@factum/tools';
import { describe, expect, it } from 'vitest';
import { McpToolSource } from '../src/index.ts';
import { factsOf, invocation, temporaryDirectory, wide } from './support/log-fixtures.ts';
import { keyed } from './support/servers.ts';

const child = fileURLToPath(new URL('./support/factum-child.ts', import.meta.url));
const lines = (path: string) =>
  existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];

/** Starts the child and SIGKILLs it as soon as the server has recorded the request. */
function killMidCall(file: string, dir: string, tool: string): Promise<NodeJS.Signals | null> {
  return new Promise((resolve, reject) => {
    const factum = spawn('node', ['--conditions=@factum/source', '--import', 'tsx', child, file, dir, tool], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const watch = setInterval(() => {
      if (lines(join(dir, 'requests')).length > 0) factum.kill('SIGKILL');
    }, 20);
    factum.on('error', reject);
    factum.on('close', (_code, signal) => {
      clearInterval(watch);
      resolve(signal);
    });
  });
}

describe('Factum SIGKILLed in the middle of an MCP call', () => {
  it('an idempotent tool: uncertain after the crash, re-run recorded with the same key, and the server sees one effect', async () => {
    using dir = temporaryDirectory();
    expect(await killMidCall(dir.file, dir.path, 'slow-charge')).toBe('SIGKILL');
    await using log = await EventLog.open(dir.file);
    expect((await log.invocationRecovery(invocation, wide)).uncertainOperations).toEqual(['step:c1']);
    await recoverInvocations(log);

    await using source = await McpToolSource.connect(keyed(dir.path));
    const outcomes = await reconcileUncertain(log, invocation, {
      catalog: new ToolCatalog(source.registrations()),
    });
    expect(outcomes).toEqual([expect.objectContaining({ decision: 'succeeded', attempt: 2 })]);
    const requests = lines(join(dir.path, 'requests')).map((line) => JSON.parse(line));
    expect(requests.map((request) => request.attempt)).toEqual([1, 2]);
    expect(new Set(requests.map((request) => request.key)).size).toBe(1);
    expect(lines(join(dir.path, 'effects'))).toHaveLength(1);
    const kinds = (await factsOf(log, 'step:c1')).map((fact) => fact.kind);
    expect(kinds).toEqual(['tool_dispatched', 'tool_redispatched', 'tool_reconciled']);
  }, 90_000);

  it('a tool with no hints: uncertain after the crash, and reconciliation sends nothing', async () => {
    using dir = temporaryDirectory();
    expect(await killMidCall(dir.file, dir.path, 'slow-transfer')).toBe('SIGKILL');
    await using log = await EventLog.open(dir.file);
    await recoverInvocations(log);
    await using source = await McpToolSource.connect(keyed(dir.path));
    const outcomes = await reconcileUncertain(log, invocation, {
      catalog: new ToolCatalog(source.registrations()),
    });
    expect(outcomes).toEqual([expect.objectContaining({ decision: 'left_uncertain', attempt: 1 })]);
    expect(lines(join(dir.path, 'requests'))).toHaveLength(1);
    expect((await log.invocationRecovery(invocation, wide)).uncertainOperations).toEqual(['step:c1']);
  }, 90_000);
});
