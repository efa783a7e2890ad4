import { spawn } from 'node:child_process';
import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { EventLog } from '@factum/event-log';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { runCli, temporaryDirectory } from './cli-harness.ts';

const OUTSIDE = 'OUTSIDE-SECRET-5c1e';

function providerArgs(baseUrl: string, dataDir: string): string[] {
  return ['--base-url', baseUrl, '--model', 'test', '--dir', dataDir];
}

/** Every settled tool call's outcome by call id: the result, or the failure's message. */
async function outcomes(
  dataDir: string,
): Promise<Map<string, { ok: true; value: unknown } | { ok: false; message: string }>> {
  const log = await EventLog.open(join(dataDir, 'events.sqlite'));
  try {
    const found = new Map<string, { ok: true; value: unknown } | { ok: false; message: string }>();
    for (const { event } of (await log.prefix({ maxEvents: 100_000, maxBytes: 256 << 20 })).events) {
      const fact = event.fact;
      if (fact.kind !== 'tool_settled') continue;
      const id = fact.operationId.split(':').at(-1)!;
      found.set(
        id,
        fact.outcome.kind === 'succeeded'
          ? { ok: true, value: (await log.resolveToolResult(event.invocation.sessionId, event.id)).json() }
          : { ok: false, message: fact.outcome.error.message },
      );
    }
    return found;
  } finally {
    await log.close();
  }
}

/** A child process that swaps `d` between a real directory and a symbolic link to outside, as fast as it can. */
function startSwapper(workspace: string) {
  const script = `
    const fs = require('fs');
    process.chdir(${JSON.stringify(workspace)});
    for (;;) {
      try { fs.renameSync('d', 'd-real'); fs.renameSync('d-link', 'd'); fs.renameSync('d', 'd-link'); fs.renameSync('d-real', 'd'); } catch {}
    }`;
  const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
  return { [Symbol.dispose]: () => child.kill('SIGKILL') };
}

describe('file tools are confined by what they opened', () => {
  it('a directory swapped for a symbolic link to outside, hundreds of times during reads and writes, never lets a byte in or out', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    const outside = join(dir.path, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.txt'), OUTSIDE);
    mkdirSync(join(dir.workspace, 'd'));
    writeFileSync(join(dir.workspace, 'd', 'secret.txt'), 'inside');
    symlinkSync(outside, join(dir.workspace, 'd-link'));
    const reads = Array.from({ length: 300 }, (_, i) => ({
      id: `r${i}`,
      name: 'read_file',
      arguments: { path: 'd/secret.txt' },
    }));
    const writes = Array.from({ length: 100 }, (_, i) => ({
      id: `w${i}`,
      name: 'write_file',
      arguments: { path: 'd/out.txt', content: `write ${i}` },
    }));
    provider.script({ toolCalls: [...reads, ...writes] }, { text: 'done' });
    {
      using _swapper = startSwapper(dir.workspace);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const result = await runCli(['run', 'race', ...providerArgs(provider.baseUrl, dir.dataDir)], {
        cwd: dir.workspace,
      });
      expect(result.code).toBe(0);
    }
    const settled = await outcomes(dir.dataDir);
    expect(settled.size).toBe(400);
    let inside = 0;
    // A refusal (of whatever kind) is fine; a success must have used the inside file.
    const leaked: string[] = [];
    for (const [id, outcome] of settled) {
      if (!outcome.ok || !id.startsWith('r')) continue;
      if ((outcome.value as { content: string }).content === 'inside') inside += 1;
      else leaked.push(id);
    }
    expect(leaked, 'reads that returned the outside file').toEqual([]);
    expect(inside, 'some reads met the real directory').toBeGreaterThan(0);
    expect(readdirSync(outside)).toEqual(['secret.txt']);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe(OUTSIDE);
    for (const file of readdirSync(dir.dataDir)) {
      expect(readFileSync(join(dir.dataDir, file)).includes(OUTSIDE), file).toBe(false);
    }
    expect(JSON.stringify(provider.requests).includes(OUTSIDE)).toBe(false);
  }, 120_000);

  it('refuses writes through a second hard link (an outside file’s other name) but reads it', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    const target = join(dir.path, 'outside-target.txt');
    writeFileSync(target, 'outside content');
    linkSync(target, join(dir.workspace, 'alias.txt'));
    provider.script(
      {
        toolCalls: [
          { id: 'write', name: 'write_file', arguments: { path: 'alias.txt', content: 'overwritten' } },
          { id: 'read', name: 'read_file', arguments: { path: 'alias.txt' } },
        ],
      },
      { text: 'done' },
    );
    expect(
      (await runCli(['run', 'links', ...providerArgs(provider.baseUrl, dir.dataDir)], { cwd: dir.workspace }))
        .code,
    ).toBe(0);
    const settled = await outcomes(dir.dataDir);
    expect(settled.get('write')).toMatchObject({
      ok: false,
      message: expect.stringContaining('has 2 hard links'),
    });
    expect(settled.get('read')).toMatchObject({ ok: true, value: { content: 'outside content' } });
    expect(readFileSync(target, 'utf8')).toBe('outside content');
  }, 120_000);

  it('returns a binary file as bounded, labelled base64, and stops a search at its file bound', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    writeFileSync(join(dir.workspace, 'zeros.bin'), Buffer.alloc(256 * 1024));
    mkdirSync(join(dir.workspace, 'many'));
    for (let i = 0; i < 5_100; i += 1) writeFileSync(join(dir.workspace, 'many', `f${i}.txt`), 'needle\n');
    provider.script(
      {
        toolCalls: [
          { id: 'binary', name: 'read_file', arguments: { path: 'zeros.bin' } },
          { id: 'search', name: 'search', arguments: { query: 'absent-everywhere' } },
        ],
      },
      { text: 'done' },
    );
    expect(
      (
        await runCli(['run', 'bounds', ...providerArgs(provider.baseUrl, dir.dataDir)], {
          cwd: dir.workspace,
        })
      ).code,
    ).toBe(0);
    const settled = await outcomes(dir.dataDir);
    const binary = settled.get('binary') as {
      ok: true;
      value: { encoding: string; content: string; truncated: boolean; note: string };
    };
    expect(binary.value).toMatchObject({
      encoding: 'base64',
      truncated: true,
      note: expect.stringContaining('binary file'),
    });
    expect(JSON.stringify(binary.value).length).toBeLessThan(70 * 1024);
    // 5,100 files pass the file bound; on a slow machine the time bound may stop it first.
    const search = settled.get('search') as {
      ok: true;
      value: { truncated: boolean; stoppedBy: string; filesSearched: number };
    };
    expect(search.value.truncated).toBe(true);
    expect(['files', 'time']).toContain(search.value.stoppedBy);
    expect(search.value.filesSearched).toBeLessThanOrEqual(5_000);
    expect(existsSync(join(dir.dataDir, 'events.sqlite'))).toBe(true);
  }, 120_000);
});
