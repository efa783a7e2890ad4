import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { EventLog, recoverInvocations } from '@factum/event-log';
import { describe, expect, it } from 'vitest';
import { reconcileUncertain } from '../src/index.ts';
import { DedupeService } from './support/dedupe-service.ts';
import { invocation, temporaryDirectory, wide } from './support/fixtures.ts';
import { keyedCatalog } from './support/keyed-tool.ts';

const child = fileURLToPath(new URL('./support/keyed-child.ts', import.meta.url));

function runChild(file: string, url: string): Promise<NodeJS.Signals | null> {
  return new Promise((resolve, reject) => {
    const process = spawn('node', ['--conditions=@factum/source', '--import', 'tsx', child, file, url], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    process.on('error', reject);
    process.on('close', (_code, signal) => resolve(signal));
  });
}

describe('the idempotency key across a crash', () => {
  it('a service that deduplicates on the key sees one effect across a SIGKILL and a recorded re-run', async () => {
    using dir = temporaryDirectory();
    await using service = await DedupeService.start();
    expect(await runChild(dir.file, service.url)).toBe('SIGKILL');
    expect(service.effects).toHaveLength(1);

    await using log = await EventLog.open(dir.file);
    expect((await log.invocationRecovery(invocation, wide)).uncertainOperations).toEqual(['step:c1']);
    await recoverInvocations(log);
    const outcomes = await reconcileUncertain(log, invocation, { catalog: keyedCatalog(service.url) });
    expect(outcomes).toEqual([
      expect.objectContaining({ operationId: 'step:c1', decision: 'succeeded', attempt: 2 }),
    ]);

    // Two requests with one key, one effect; the recorded result is the first charge.
    expect(service.requests).toHaveLength(2);
    expect(new Set(service.requests).size).toBe(1);
    expect(service.effects).toHaveLength(1);
    const events = await log.invocationEvents(invocation, wide);
    const reconciled = events.find(({ event }) => event.fact.kind === 'tool_reconciled')!;
    expect((await log.resolveToolResult(invocation.sessionId, reconciled.event.id)).json()).toEqual({
      id: 'charge-1',
    });
    expect(events.map(({ event }) => event.fact.kind)).toContain('tool_redispatched');
  });
});
