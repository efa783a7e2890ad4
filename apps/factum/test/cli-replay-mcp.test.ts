import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { ReplayOutputSchema } from '../src/commands/json-output-schemas.ts';
import { keyedMcpServer, ledgerLines, runCli, scriptedFlags, temporaryDirectory } from './cli-harness.ts';

describe('factum replay with MCP servers', () => {
  it('offers the MCP tools the runs had (as run does), serves their recorded results, and never calls the server', async () => {
    using dir = temporaryDirectory();
    const { mcp, ledger } = keyedMcpServer(dir.path);
    await using provider = await startScriptedProvider();
    provider.script(
      { toolCalls: [{ id: 'call-1', name: 'charge', arguments: { amount: 7 } }] },
      { text: 'charged 7' },
    );
    const run = await runCli(['run', 'charge 7', '--mcp', mcp, ...scriptedFlags(provider, dir.dataDir)], {
      cwd: dir.workspace,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(ledgerLines(join(ledger, 'requests'))).toHaveLength(1);
    const log = readFileSync(join(dir.dataDir, 'events.sqlite'));

    const verified = await runCli(['replay', '--all', '--mcp', mcp, '--json', '--dir', dir.dataDir], {
      cwd: dir.workspace,
    });
    expect(verified.stderr).toBe('');
    expect(verified.code).toBe(0);
    expect(ReplayOutputSchema.parse(JSON.parse(verified.stdout)).summary).toEqual({
      invocations: 1,
      same: 1,
      diverged: 0,
    });

    // Without the server its tool is not offered: the first request already differs.
    const without = await runCli(['replay', '--all', '--json', '--dir', dir.dataDir], { cwd: dir.workspace });
    expect(without.code).toBe(3);
    const divergence = ReplayOutputSchema.parse(JSON.parse(without.stdout)).invocations[0]!.divergences[0]!;
    expect(divergence).toMatchObject({ kind: 'request', index: 0 });

    // A new model repeats the recorded call and makes one of its own: the first is
    // served, the second not run — and the server hears of neither.
    const script = join(dir.path, 'new-model.json');
    writeFileSync(
      script,
      JSON.stringify([
        {
          toolCalls: [
            { id: 'c1', name: 'charge', arguments: { amount: 7 } },
            { id: 'c2', name: 'charge', arguments: { amount: 900 } },
          ],
        },
        { text: 'charged twice' },
      ]),
    );
    const model = await runCli(['replay', '--all', '--mcp', mcp, '--script', script, '--dir', dir.dataDir], {
      cwd: dir.workspace,
    });
    expect(model.code).toBe(3);
    expect(model.stdout).toContain(
      'calls: 1 served as recorded, 1 not run (new effects), 0 recorded but not made',
    );
    expect(ledgerLines(join(ledger, 'requests')), 'no replay reached the server').toHaveLength(1);
    expect(ledgerLines(join(ledger, 'effects'))).toHaveLength(1);
    expect(provider.requests).toHaveLength(2);
    expect(readFileSync(join(dir.dataDir, 'events.sqlite')).equals(log), 'the log file is untouched').toBe(
      true,
    );
  }, 120_000);
});
