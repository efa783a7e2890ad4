import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { ReplayOutputSchema } from '../src/commands/json-output-schemas.ts';
import { runCli, temporaryDirectory } from './cli-harness.ts';

describe('factum replay', () => {
  it('verify exits 0 on a log today’s code reproduces, 3 with the divergence when a tool now needs approval; model mode runs no new effect', async () => {
    using dir = temporaryDirectory();
    writeFileSync(join(dir.workspace, 'notes.txt'), 'forty lines of notes\n');
    await using provider = await startScriptedProvider();
    provider.script(
      { toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'notes.txt' } }] },
      { text: 'The notes are short.' },
    );
    const args = ['--base-url', provider.baseUrl, '--model', 'test', '--dir', dir.dataDir];
    const run = await runCli(['run', 'read notes.txt', ...args], {
      cwd: dir.workspace,
      env: { FACTUM_API_KEY: 'k' },
    });
    expect(run.code).toBe(0);
    const requests = provider.requests.length;
    const log = readFileSync(join(dir.dataDir, 'events.sqlite'));

    // The model is gone: verify needs none, the route comes from the recorded requests.
    await provider[Symbol.asyncDispose]();
    const text = await runCli(['replay', '--all', '--dir', dir.dataDir], { cwd: dir.workspace });
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^same {5}invocation-/m);
    expect(text.stdout).toContain('verify: 1 invocations replayed, 1 same, 0 diverged');

    const scratchFile = join(dir.path, 'replayed.jsonl');
    const json = await runCli(
      ['replay', '--all', '--verify', '--json', '--scratch', scratchFile, '--dir', dir.dataDir],
      { cwd: dir.workspace },
    );
    expect(json.code).toBe(0);
    const report = ReplayOutputSchema.parse(JSON.parse(json.stdout));
    expect(report.summary).toEqual({ invocations: 1, same: 1, diverged: 0 });
    expect(report.invocations[0]!.compared).toBe(7);
    const scratch = readFileSync(scratchFile, 'utf8').trim().split('\n');
    expect(scratch.map((line) => JSON.parse(line).event.fact.kind)).toEqual([
      'invocation_opened',
      'model_requested',
      'model_completed',
      'tool_dispatched',
      'tool_settled',
      'model_requested',
      'model_completed',
      'invocation_ended',
    ]);
    const again = await runCli(['replay', '--all', '--json', '--dir', dir.dataDir], { cwd: dir.workspace });
    expect(again.stdout, 'the same replay, byte for byte').toBe(json.stdout);

    const id = report.invocations[0]!.invocationId;
    const planted = await runCli(
      ['replay', id, '--require-approval', 'read_file', '--json', '--dir', dir.dataDir],
      {
        cwd: dir.workspace,
      },
    );
    expect(planted.code).toBe(3);
    const divergence = ReplayOutputSchema.parse(JSON.parse(planted.stdout)).invocations[0]!.divergences[0]!;
    expect(divergence).toMatchObject({
      kind: 'call',
      index: 2,
      recorded: { kind: 'tool_dispatched' },
      replayed: { kind: 'approval_requested' },
    });

    const script = join(dir.path, 'new-model.json');
    writeFileSync(
      script,
      JSON.stringify([
        {
          toolCalls: [
            { id: 'c1', name: 'read_file', arguments: { path: 'notes.txt' } },
            { id: 'c2', name: 'write_file', arguments: { path: 'summary.txt', content: 'short' } },
          ],
        },
        { text: 'I wrote a summary.' },
      ]),
    );
    const model = await runCli(['replay', id, '--script', script, '--dir', dir.dataDir], {
      cwd: dir.workspace,
    });
    expect(model.code).toBe(3);
    expect(model.stdout).toContain(
      'calls: 1 served as recorded, 1 not run (new effects), 0 recorded but not made',
    );
    expect(model.stdout).toContain('recorded answer (completed): The notes are short.');
    expect(model.stdout).toContain('replayed answer (completed): I wrote a summary.');
    expect(existsSync(join(dir.workspace, 'summary.txt')), 'the new call did not run').toBe(false);
    expect(provider.requests).toHaveLength(requests);
    expect(readFileSync(join(dir.dataDir, 'events.sqlite')).equals(log), 'the log file is untouched').toBe(
      true,
    );
  }, 60_000);

  it('refuses a target and --all together, and model flags with --verify, as usage errors', async () => {
    using dir = temporaryDirectory();
    const both = await runCli(['replay', 'x', '--all', '--dir', dir.dataDir], { cwd: dir.workspace });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('name one invocation or session to replay, or pass --all');
    const mixed = await runCli(['replay', '--all', '--verify', '--model', 'm', '--dir', dir.dataDir], {
      cwd: dir.workspace,
    });
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain('--verify replays the recorded answers');
  });
});
