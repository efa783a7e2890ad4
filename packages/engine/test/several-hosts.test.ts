import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventLog } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { startScriptedProvider } from '@factum/model/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { ledgerLines } from './support/after-crash.ts';
import { bounds, done, oneCall, temporaryDirectory } from './support/agent-loop.ts';
import { bundleChildren, nodeArgs } from './support/child-node.ts';

const child = fileURLToPath(new URL('./support/host-child.ts', import.meta.url));
beforeAll(() => bundleChildren(child));
const postgres = testStores().find((factory) => factory.name === 'postgres');

type Host = {
  output: Promise<{ lines: string[]; signal: string | null; code: number | null }>;
  kill(): void;
};

function host(args: string[]): Host {
  const process = spawn('node', nodeArgs(child, args), {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let text = '';
  process.stdout.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  const output = new Promise<{ lines: string[]; signal: string | null; code: number | null }>(
    (resolve, reject) => {
      process.on('error', reject);
      process.on('close', (code, signal) =>
        resolve({ lines: text.split('\n').filter(Boolean), signal, code }),
      );
    },
  );
  return { output, kill: () => process.kill('SIGKILL') };
}

describe('several hosts on one PostgreSQL log', () => {
  it('a handoff committed by one process is resumed by another; nothing runs twice', async () => {
    await using store = await postgres!.create();
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    provider.script(oneCall('echo'), done);
    const url = (store.target as { postgres: string }).postgres;
    const ledger = join(dir.path, 'ledger');
    const a = await host(['handoff', url, provider.baseUrl, ledger]).output;
    expect(a.code).toBe(0);
    const pause = a.lines[0]!;
    const b = await host(['resume', url, provider.baseUrl, ledger, pause]).output;
    expect(b.code).toBe(0);
    expect(JSON.parse(b.lines[0]!)).toEqual({ kind: 'completed' });
    const effects = ledgerLines(ledger);
    expect(effects, 'the effect ran once, on the first host').toHaveLength(1);
    const log = await EventLog.open(store.target);
    const prefix = await log.prefix(bounds);
    expect(prefix.projectInvocation('invocation-first').terminal).toBe('paused');
    expect(prefix.projectInvocation('invocation-successor').terminal).toBe('completed');
    expect(await log.verifyChain()).toMatchObject({ ok: true });
    const tools = (provider.requests[1]!.messages as { role: string }[]).filter(
      (message) => message.role === 'tool',
    );
    expect(tools, 'the successor sees the settled effect as a fact').toHaveLength(1);
    await log.close();
  }, 60_000);

  it('two processes never both admit the same session', async () => {
    await using store = await postgres!.create();
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    provider.script({ ...done, hold: true }, { ...done, hold: true });
    const url = (store.target as { postgres: string }).postgres;
    const ledger = join(dir.path, 'ledger');
    const hosts = [
      host(['admit', url, provider.baseUrl, ledger, 'x']),
      host(['admit', url, provider.baseUrl, ledger, 'y']),
    ];
    // The refused host exits at once; the admitted one holds its invocation live.
    const refused = await Promise.race(hosts.map((h) => h.output));
    expect(refused.lines).toEqual(['busy']);
    for (const h of hosts) h.kill();
    const results = await Promise.all(hosts.map((h) => h.output));
    expect(results.flatMap((result) => result.lines).sort()).toEqual(['admitted', 'busy']);
    const log = await EventLog.open(store.target);
    expect(await log.unfinishedInvocations(10)).toHaveLength(1);
    await log.close();
  }, 60_000);

  it('a host killed mid-effect leaves its operation uncertain for the other host to see', async () => {
    await using store = await postgres!.create();
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    provider.script(oneCall('echo'));
    const url = (store.target as { postgres: string }).postgres;
    const ledger = join(dir.path, 'ledger');
    const a = await host(['crash', url, provider.baseUrl, ledger]).output;
    expect(a.signal).toBe('SIGKILL');
    expect(ledgerLines(ledger)).toHaveLength(1);
    const log = await EventLog.open(store.target);
    const first = {
      sessionId: 'shared',
      turnId: 'turn-first',
      runId: 'run-first',
      invocationId: 'invocation-first',
    };
    expect(await log.unfinishedInvocations(10)).toEqual([first]);
    const recovery = await log.invocationRecovery(first, bounds);
    expect(recovery.uncertainOperations).toHaveLength(1);
    expect(recovery.uncertainOperations[0]).toMatch(/:call-1$/);
    await log.close();
  }, 60_000);
});
